// A store file's bytes: what probe_file makes of them, then Store::open read-only (listing and
// loading every run, as `gpuscope report` does), then open for writing (the migration path, as
// `--store FILE` does).
#include "fuzz/fuzz_input.h"
#include "gpuscope/store.h"
#include "store/file_probe.h"

namespace {

void read_everything(const gpuscope::store::Store& store) {
  auto runs = store.list_runs();
  if (!runs.ok()) return;
  for (const auto& summary : *runs) (void)store.load_run(summary.id);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope::store;
  const std::string& path = gpuscope::fuzz::write_input_file(gpuscope::fuzz::as_text(data, size));
  (void)detail::probe_file(path);
  StoreOptions read_only;
  read_only.read_only = true;
  if (auto store = Store::open(path, read_only); store.ok()) read_everything(**store);
  if (auto store = Store::open(path); store.ok()) read_everything(**store);
  return 0;
}
