#include "input/jpeg_codec.h"

#if GPUSCOPE_TORCH_HAVE_JPEG
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>
#endif

namespace gpuscope::workloads {

#if GPUSCOPE_TORCH_HAVE_JPEG
namespace {

// libjpeg reports a fatal error by calling error_exit, which must not return: jump back to the
// call's setjmp with the message kept. Only trivially destructible objects live between setjmp
// and the jump.
struct ErrorManager {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

extern "C" void on_jpeg_error(j_common_ptr info) {
  auto* manager = reinterpret_cast<ErrorManager*>(info->err);
  (*info->err->format_message)(info, manager->message);
  std::longjmp(manager->jump, 1);
}

extern "C" void on_jpeg_warning(j_common_ptr, int) {}  // corrupt-data warnings: keep decoding

// The setjmp frames: no C++ object with a destructor may be live in them.
bool decode_into(const uint8_t* data, size_t size, ErrorManager& errors, RgbImage& out) {
  jpeg_decompress_struct info;
  info.err = jpeg_std_error(&errors.base);
  errors.base.error_exit = on_jpeg_error;
  errors.base.emit_message = on_jpeg_warning;
  if (setjmp(errors.jump)) {
    jpeg_destroy_decompress(&info);
    return false;
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, data, static_cast<unsigned long>(size));
  jpeg_read_header(&info, TRUE);
  info.out_color_space = JCS_RGB;
  jpeg_start_decompress(&info);
  out.width = static_cast<int>(info.output_width);
  out.height = static_cast<int>(info.output_height);
  out.pixels.resize(static_cast<size_t>(out.width) * out.height * 3);
  while (info.output_scanline < info.output_height) {
    JSAMPROW row = out.pixels.data() + static_cast<size_t>(info.output_scanline) * out.width * 3;
    jpeg_read_scanlines(&info, &row, 1);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return true;
}

bool encode_into(const RgbImage& image, int quality, ErrorManager& errors, unsigned char** buffer,
                 unsigned long* size) {
  jpeg_compress_struct info;
  info.err = jpeg_std_error(&errors.base);
  errors.base.error_exit = on_jpeg_error;
  if (setjmp(errors.jump)) {
    jpeg_destroy_compress(&info);
    return false;
  }
  jpeg_create_compress(&info);
  jpeg_mem_dest(&info, buffer, size);
  info.image_width = static_cast<JDIMENSION>(image.width);
  info.image_height = static_cast<JDIMENSION>(image.height);
  info.input_components = 3;
  info.in_color_space = JCS_RGB;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, quality, TRUE);
  jpeg_start_compress(&info, TRUE);
  while (info.next_scanline < info.image_height) {
    auto* row = const_cast<JSAMPROW>(image.pixels.data() +
                                     static_cast<size_t>(info.next_scanline) * image.width * 3);
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  jpeg_destroy_compress(&info);
  return true;
}

}  // namespace

bool jpeg_available() {
  return true;
}

std::string jpeg_unavailable_reason() {
  return {};
}

std::variant<RgbImage, std::string> decode_jpeg(std::span<const uint8_t> data) {
  if (data.size() < 4) return std::string("not a JPEG file (too short)");
  ErrorManager errors{};
  RgbImage image;
  if (!decode_into(data.data(), data.size(), errors, image)) return std::string(errors.message);
  return image;
}

std::variant<std::vector<uint8_t>, std::string> encode_jpeg(const RgbImage& image, int quality) {
  ErrorManager errors{};
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  const bool ok = encode_into(image, quality, errors, &buffer, &size);
  std::vector<uint8_t> bytes;
  if (ok) bytes.assign(buffer, buffer + size);
  std::free(buffer);  // jpeg_mem_dest's buffer is malloc'ed and left to the caller
  if (!ok) return std::string(errors.message);
  return bytes;
}

#else  // built without libjpeg

bool jpeg_available() {
  return false;
}

std::string jpeg_unavailable_reason() {
  return "this gpuscope-torch was built without libjpeg-turbo (Debian libjpeg62-turbo-dev; "
         "see cmake/jpeg.cmake), so it cannot decode JPEG images";
}

std::variant<RgbImage, std::string> decode_jpeg(std::span<const uint8_t>) {
  return jpeg_unavailable_reason();
}

std::variant<std::vector<uint8_t>, std::string> encode_jpeg(const RgbImage&, int) {
  return jpeg_unavailable_reason();
}

#endif

}  // namespace gpuscope::workloads
