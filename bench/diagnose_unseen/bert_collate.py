"""BERT-base fine-tuning on raw text, tokenized in the DataLoader's collate_fn in the training
process (num_workers=0): a slow pure-Python tokenizer feeds a fast GPU. Flaw: input-bound.
Random weights from BertConfig (nothing downloaded), synthetic sentences."""
import argparse
import random
import time

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import BertConfig, BertForSequenceClassification

WORDS = [f"w{i}x{i * 7919 % 1000}" for i in range(5000)]


class Sentences(Dataset):
    def __init__(self, n, words):
        rng = random.Random(0)
        self.texts = [" ".join(rng.choice(WORDS) for _ in range(words)) for _ in range(n)]
        self.labels = [rng.randrange(2) for _ in range(n)]

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, i):
        return self.texts[i], self.labels[i]


def tokenize(text, seq_len, vocab):
    # A character-level hash per word, the way a hand-rolled tokenizer does it.
    ids = [101]
    for word in text.split():
        h = 0
        for ch in word:
            h = (h * 131 + ord(ch)) % 1000003
        ids.append(1000 + h % (vocab - 1000))
    ids = ids[: seq_len - 1] + [102]
    return ids + [0] * (seq_len - len(ids))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq-len", type=int, default=256)
    args = ap.parse_args()
    config = BertConfig(num_labels=2)
    model = BertForSequenceClassification(config).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5, fused=True)

    def collate(batch):
        ids = [tokenize(t, args.seq_len, config.vocab_size) for t, _ in batch]
        return torch.tensor(ids), torch.tensor([label for _, label in batch])

    data = Sentences(args.batch * args.steps, words=args.seq_len * 4)
    loader = DataLoader(data, batch_size=args.batch, shuffle=True, collate_fn=collate)
    start = time.time()
    for step, (ids, labels) in enumerate(loader):
        ids, labels = ids.cuda(), labels.cuda()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, attention_mask=(ids != 0), labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 20 == 0:
            print(f"step {step} loss {loss.item():.4f} {time.time() - start:.1f}s", flush=True)


if __name__ == "__main__":
    main()
