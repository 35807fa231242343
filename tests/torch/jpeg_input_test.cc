// The JPEG input path on generated images: codec round trip and corrupt data, the generated image
// set, ImageFolder labels, the random-resized-crop transform, and batches with a corrupt file.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>

#include "input/augment.h"
#include "input/files.h"
#include "input/host_batches.h"
#include "input/image_folder.h"
#include "input/image_set.h"
#include "input/jpeg_batches.h"
#include "input/jpeg_codec.h"

namespace gpuscope::workloads {
namespace {

// A fresh folder under the test's temporary directory, removed afterwards. (POSIX calls, as
// input/files.h explains: not std::filesystem.)
class TempDir {
 public:
  explicit TempDir(const std::string& name) : path_(testing::TempDir() + "gpuscope_torch_" + name) {
    remove_tree(path_);
    EXPECT_EQ(make_directories(path_), "");
  }
  ~TempDir() { remove_tree(path_); }
  std::string operator/(const std::string& relative) const { return path_ + "/" + relative; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

RgbImage gradient(int width, int height) {
  RgbImage image;
  image.width = width;
  image.height = height;
  image.pixels.resize(static_cast<size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      uint8_t* p = &image.pixels[(static_cast<size_t>(y) * width + x) * 3];
      p[0] = static_cast<uint8_t>(x * 255 / width);
      p[1] = static_cast<uint8_t>(y * 255 / height);
      p[2] = 128;
    }
  }
  return image;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

class JpegInput : public testing::Test {
 protected:
  void SetUp() override {
    if (!jpeg_available()) GTEST_SKIP() << jpeg_unavailable_reason();
  }
};

TEST_F(JpegInput, EncodeDecodeRoundTrip) {
  const RgbImage image = gradient(40, 30);
  const auto encoded = encode_jpeg(image, 95);
  ASSERT_TRUE(std::holds_alternative<std::vector<uint8_t>>(encoded));
  const auto decoded = decode_jpeg(std::get<std::vector<uint8_t>>(encoded));
  ASSERT_TRUE(std::holds_alternative<RgbImage>(decoded)) << std::get<std::string>(decoded);
  const RgbImage& back = std::get<RgbImage>(decoded);
  ASSERT_EQ(back.width, 40);
  ASSERT_EQ(back.height, 30);
  double error = 0;
  for (size_t i = 0; i < image.pixels.size(); ++i) {
    error += std::abs(static_cast<int>(image.pixels[i]) - static_cast<int>(back.pixels[i]));
  }
  EXPECT_LT(error / static_cast<double>(image.pixels.size()), 4.0);
}

TEST_F(JpegInput, CorruptDataIsAnErrorNotACrash) {
  const std::string garbage = "this is not a JPEG file at all";
  const auto decoded = decode_jpeg(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(garbage.data()), garbage.size()));
  ASSERT_TRUE(std::holds_alternative<std::string>(decoded));
  EXPECT_FALSE(std::get<std::string>(decoded).empty());
  // A real JPEG cut short.
  auto bytes = std::get<std::vector<uint8_t>>(encode_jpeg(gradient(64, 64), 90));
  bytes.resize(20);
  EXPECT_TRUE(std::holds_alternative<std::string>(decode_jpeg(bytes)));
}

TEST_F(JpegInput, GeneratedSetIsAnImageFolder) {
  TempDir dir("image_set");
  ASSERT_EQ(write_image_set({dir.path(), 9, 3, 0}), std::nullopt);
  const auto scanned = scan_image_folder(dir.path());
  ASSERT_TRUE(std::holds_alternative<ImageFolder>(scanned)) << std::get<std::string>(scanned);
  const ImageFolder& folder = std::get<ImageFolder>(scanned);
  EXPECT_EQ(folder.classes, (std::vector<std::string>{"class_0", "class_1", "class_2"}));
  ASSERT_EQ(folder.files.size(), 9u);
  for (const ImageFile& file : folder.files) {
    const std::string expected = "class_" + std::to_string(file.label);
    EXPECT_NE(file.path.find("/" + expected + "/"), std::string::npos) << file.path;
  }
}

TEST_F(JpegInput, LabelsFollowTheSortedTopLevelFolders) {
  TempDir dir("labels");
  const auto bytes = std::get<std::vector<uint8_t>>(encode_jpeg(gradient(8, 8), 90));
  const std::string jpeg(bytes.begin(), bytes.end());
  ASSERT_EQ(make_directories(dir / "zebra/deeper"), "");
  ASSERT_EQ(make_directories(dir / "apple"), "");
  write_file(dir / "zebra/deeper/z.JPEG", jpeg);
  write_file(dir / "apple/a.jpg", jpeg);
  write_file(dir / "apple/notes.txt", "ignored");
  write_file(dir / "root.jpg", jpeg);
  const auto folder = std::get<ImageFolder>(scan_image_folder(dir.path()));
  EXPECT_EQ(folder.classes, (std::vector<std::string>{"", "apple", "zebra"}));
  ASSERT_EQ(folder.files.size(), 3u);
  const auto label_of = [&](std::string_view name) -> int64_t {
    for (const ImageFile& file : folder.files) {
      if (file.path.ends_with(name)) return file.label;
    }
    return -1;
  };
  EXPECT_EQ(label_of("/root.jpg"), 0);
  EXPECT_EQ(label_of("/a.jpg"), 1);
  EXPECT_EQ(label_of("/z.JPEG"), 2);
}

TEST_F(JpegInput, MissingOrEmptyFolderSaysWhy) {
  const auto missing = scan_image_folder("/nonexistent/gpuscope-images");
  ASSERT_TRUE(std::holds_alternative<std::string>(missing));
  EXPECT_NE(std::get<std::string>(missing).find("no such directory"), std::string::npos);
  TempDir dir("empty");
  write_file(dir / "readme.txt", "no images here");
  const auto empty = scan_image_folder(dir.path());
  ASSERT_TRUE(std::holds_alternative<std::string>(empty));
  EXPECT_NE(std::get<std::string>(empty).find("no .jpg"), std::string::npos);
}

TEST(Augment, CropsStayInsideTheImage) {
  std::mt19937_64 rng(1);
  for (const auto& [w, h] : {std::pair{320, 240}, std::pair{50, 400}, std::pair{1, 1}}) {
    for (int i = 0; i < 200; ++i) {
      const CropBox box = random_resized_crop(w, h, rng);
      ASSERT_GE(box.x, 0);
      ASSERT_GE(box.y, 0);
      ASSERT_GE(box.width, 1);
      ASSERT_GE(box.height, 1);
      ASSERT_LE(box.x + box.width, w);
      ASSERT_LE(box.y + box.height, h);
    }
  }
}

TEST(Augment, OutputIsNormalizedAndFlipMirrors) {
  const RgbImage image = gradient(100, 60);
  const CropBox box{10, 5, 60, 50};
  const int side = 24;
  std::vector<float> plain(3 * side * side), flipped(3 * side * side);
  resize_normalize(image, box, false, side, plain.data());
  resize_normalize(image, box, true, side, flipped.data());
  for (int c = 0; c < 3; ++c) {
    const float low = -kImageNetMean[c] / kImageNetStd[c];
    const float high = (1.0f - kImageNetMean[c]) / kImageNetStd[c];
    for (int y = 0; y < side; ++y) {
      for (int x = 0; x < side; ++x) {
        const float v = plain[static_cast<size_t>((c * side + y) * side + x)];
        ASSERT_GE(v, low - 1e-4f);
        ASSERT_LE(v, high + 1e-4f);
        ASSERT_FLOAT_EQ(v, flipped[static_cast<size_t>((c * side + y) * side + side - 1 - x)]);
      }
    }
  }
  // Red grows with x in the gradient: so must channel 0 along a row.
  EXPECT_LT(plain[0], plain[side - 1]);
}

TEST_F(JpegInput, BatchesSkipACorruptFileAndCountIt) {
  TempDir dir("corrupt");
  ASSERT_EQ(write_image_set({dir.path(), 6, 2, 0}), std::nullopt);
  write_file(dir / "class_1/broken.jpg", "not a jpeg");
  const auto folder = std::get<ImageFolder>(scan_image_folder(dir.path()));
  ASSERT_EQ(folder.files.size(), 7u);
  BatchSpec spec;
  spec.model = ModelKind::resnet50;
  spec.shape.image_size = 32;
  spec.batch = 7;  // every file once
  JpegBatches batches(folder, spec, 0);
  auto slot = make_host_slot(spec, false);
  batches.produce(0, *slot);
  EXPECT_EQ(batches.unreadable_files(), 1);
  EXPECT_NE(batches.first_unreadable().find("broken.jpg"), std::string::npos);
  EXPECT_EQ(slot->input.sizes(), (std::vector<int64_t>{7, 3, 32, 32}));
  EXPECT_TRUE(slot->input.isfinite().all().item<bool>());
  EXPECT_GE(slot->target.min().item<int64_t>(), 0);
  EXPECT_LE(slot->target.max().item<int64_t>(), 1);
  batches.produce(1, *slot);
  EXPECT_EQ(batches.unreadable_files(), 1) << "a bad file is counted once";
}

TEST_F(JpegInput, AFolderOfOnlyCorruptFilesFailsClearly) {
  TempDir dir("all_corrupt");
  write_file(dir / "a.jpg", "junk");
  write_file(dir / "b.jpg", "more junk");
  BatchSpec spec;
  spec.model = ModelKind::resnet50;
  spec.shape.image_size = 32;
  spec.batch = 2;
  JpegBatches batches(std::get<ImageFolder>(scan_image_folder(dir.path())), spec, 0);
  auto slot = make_host_slot(spec, false);
  try {
    batches.produce(0, *slot);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("decodes as a JPEG"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpuscope::workloads
