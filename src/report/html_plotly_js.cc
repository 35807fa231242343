#include "report/html_plotly_js.h"

#if GPUSCOPE_HAVE_PLOTLY
// .incbin copies the file into the object at assembly time: a 4.8 MB bundle costs nothing to
// compile, unlike the same bytes as a C++ array initializer. The NUL after it is not part of
// the bundle; it only keeps the end symbol inside the section.
asm(".section .rodata\n"
    ".balign 16\n"
    ".global gpuscope_plotly_js_begin\n"
    "gpuscope_plotly_js_begin:\n"
    ".incbin \"" GPUSCOPE_PLOTLY_JS_PATH
    "\"\n"
    ".global gpuscope_plotly_js_end\n"
    "gpuscope_plotly_js_end:\n"
    ".byte 0\n"
    ".previous\n");
extern "C" const char gpuscope_plotly_js_begin[];
extern "C" const char gpuscope_plotly_js_end[];
#endif

namespace gpuscope::report::detail {

std::string_view plotly_js() {
#if GPUSCOPE_HAVE_PLOTLY
  return std::string_view(
      gpuscope_plotly_js_begin,
      static_cast<std::size_t>(gpuscope_plotly_js_end - gpuscope_plotly_js_begin));
#else
  return {};
#endif
}

std::string_view plotly_js_version() {
#if GPUSCOPE_HAVE_PLOTLY
  return GPUSCOPE_PLOTLY_JS_VERSION;
#else
  return {};
#endif
}

}  // namespace gpuscope::report::detail
