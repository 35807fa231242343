// The precompiled header of gpuscope-torch's targets: LibTorch's C++ API, which every source
// file here uses, is parsed once per target instead of once per file.
#pragma once

#include <torch/torch.h>

#include <ATen/autocast_mode.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
