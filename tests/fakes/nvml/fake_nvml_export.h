// Every source of the fake includes nvml.h through this header. The library is built with
// -fvisibility=hidden so that it exports nothing but NVML's entry points and the control API;
// each entry point it defines is marked with GPUSCOPE_FAKE_NVML_EXPORT.
#pragma once

#include <nvml.h>

#define GPUSCOPE_FAKE_NVML_EXPORT extern "C" __attribute__((visibility("default")))
