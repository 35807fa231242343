"""A small synthetic text pipeline and GPT-like model for the language-model examples.

Documents are strings of made-up words; the "tokenizer" lower-cases, splits and looks each word
up in a dictionary, on the host in Python, as a simple on-the-fly tokenizer would. Nothing is
downloaded.
"""
import random

import torch
import torch.nn.functional as F


class TextBatches:
    """Makes (tokens, targets) batches on the host: batch x (seq + 1) word ids per call."""

    def __init__(self, batch, seq, vocab=8192, seed=0):
        rng = random.Random(seed)
        letters = "abcdefghijklmnopqrstuvwxyz"
        words = set()
        while len(words) < vocab - 1:
            words.add("".join(rng.choice(letters) for _ in range(rng.randint(2, 9))))
        self.words = sorted(words)
        self.ids = {w: i + 1 for i, w in enumerate(self.words)}  # 0: unknown
        # A corpus of capitalized words to split into documents.
        self.corpus = [rng.choice(self.words).capitalize() for _ in range(1 << 18)]
        self.batch, self.seq, self.vocab = batch, seq, vocab
        self.position = 0

    def texts(self):
        n = self.seq + 1
        out = []
        for _ in range(self.batch):
            if self.position + n > len(self.corpus):
                self.position = 0
            out.append(" ".join(self.corpus[self.position : self.position + n]))
            self.position += n
        return out

    def tokenize(self, texts):
        rows = []
        for text in texts:
            ids = [self.ids.get(word.strip(".,;:").lower(), 0) for word in text.split()]
            ids = ids[: self.seq + 1] + [0] * (self.seq + 1 - len(ids))
            rows.append(ids)
        tokens = torch.tensor(rows, dtype=torch.long)
        return tokens[:, :-1], tokens[:, 1:]

    def next(self):
        return self.tokenize(self.texts())


class Block(torch.nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(width)
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.proj = torch.nn.Linear(width, width)
        self.ln2 = torch.nn.LayerNorm(width)
        self.fc = torch.nn.Linear(width, 4 * width)
        self.out = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, c // self.heads).unbind(2)
        y = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True
        )
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class TinyGPT(torch.nn.Module):
    def __init__(self, vocab, seq, width, layers, heads):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.pos = torch.nn.Parameter(torch.zeros(seq, width))
        self.blocks = torch.nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln = torch.nn.LayerNorm(width)
        self.head = torch.nn.Linear(width, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))
