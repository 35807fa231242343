#include "capability/nccl_library.h"

#include <dlfcn.h>

#include <cstdlib>

namespace gpuscope::capability::detail {
namespace {

// NCCL's ABI, as nccl.h declares it.
using NcclResult = int;  // ncclResult_t: 0 = ncclSuccess
constexpr int kNcclFloat32 = 7;
constexpr int kNcclSum = 0;

}  // namespace

struct NcclLibrary::Api {
  NcclResult (*get_version)(int*) = nullptr;
  const char* (*error_string)(NcclResult) = nullptr;
  NcclResult (*comm_init_all)(NcclComm*, int, const int*) = nullptr;
  NcclResult (*all_reduce)(const void*, void*, std::size_t, int, int, NcclComm,
                           cudaStream_t) = nullptr;
  NcclResult (*group_start)() = nullptr;
  NcclResult (*group_end)() = nullptr;
  NcclResult (*comm_destroy)(NcclComm) = nullptr;
};

namespace {

Status nccl_status(const NcclLibrary::Api& api, NcclResult result, const char* call) {
  if (result == 0) return Status{};
  return Status(Code::internal, std::string("NCCL: ") + api.error_string(result), call);
}

}  // namespace

Result<std::unique_ptr<NcclLibrary>> NcclLibrary::load() {
  const char* named = std::getenv("GPUSCOPE_NCCL_LIBRARY");
  const std::string path = named != nullptr && *named != '\0' ? named : "libnccl.so.2";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return Status(Code::not_supported,
                  "NCCL could not be loaded (" + path + "): set GPUSCOPE_NCCL_LIBRARY", dlerror());
  }
  std::unique_ptr<NcclLibrary> lib(new NcclLibrary());
  lib->handle_ = handle;
  lib->api_ = std::make_unique<Api>();
  Api& api = *lib->api_;
  const auto bind = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
    return fn != nullptr;
  };
  if (!bind(api.get_version, "ncclGetVersion") || !bind(api.error_string, "ncclGetErrorString") ||
      !bind(api.comm_init_all, "ncclCommInitAll") || !bind(api.all_reduce, "ncclAllReduce") ||
      !bind(api.group_start, "ncclGroupStart") || !bind(api.group_end, "ncclGroupEnd") ||
      !bind(api.comm_destroy, "ncclCommDestroy")) {
    return Status(Code::not_supported, path + " lacks an NCCL entry point");
  }
  return lib;
}

NcclLibrary::~NcclLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

std::string NcclLibrary::version() const {
  int code = 0;
  if (api_->get_version(&code) != 0) return "unknown";
  // Since 2.9: major*10000 + minor*100 + patch.
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
}

Status NcclLibrary::init_all(int count, NcclComm* comms) const {
  return nccl_status(*api_, api_->comm_init_all(comms, count, nullptr), "ncclCommInitAll");
}

Status NcclLibrary::all_reduce_group(int count, NcclComm* comms, float* const* buffers,
                                     std::size_t elements, cudaStream_t const* streams) const {
  GPUSCOPE_RETURN_IF_ERROR(nccl_status(*api_, api_->group_start(), "ncclGroupStart"));
  for (int i = 0; i < count; ++i) {
    const NcclResult r = api_->all_reduce(buffers[i], buffers[i], elements, kNcclFloat32, kNcclSum,
                                          comms[i], streams[i]);
    if (r != 0) {
      api_->group_end();
      return nccl_status(*api_, r, "ncclAllReduce");
    }
  }
  return nccl_status(*api_, api_->group_end(), "ncclGroupEnd");
}

void NcclLibrary::destroy(NcclComm comm) const {
  api_->comm_destroy(comm);
}

}  // namespace gpuscope::capability::detail
