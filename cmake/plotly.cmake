# plotly.js for `gpuscope report`: the minified bundle shipped in the `plotly` PyPI wheel, which
# scripts/setup-deps.sh installs into ${GPUSCOPE_DEPS_DIR}/python. It is embedded into the
# gpuscope library at build time (src/report/html_plotly_js.cc, assembler .incbin), so the
# binary writes self-contained reports wherever it runs; the file is never committed.
#
# When it is missing, gpuscope still builds and `report --html` fails with a clear message.
set(GPUSCOPE_PLOTLY_JS "${GPUSCOPE_DEPS_DIR}/python/plotly/package_data/plotly.min.js"
    CACHE FILEPATH "plotly.min.js to embed into HTML reports")
if(EXISTS "${GPUSCOPE_PLOTLY_JS}")
  file(READ "${GPUSCOPE_PLOTLY_JS}" _gpuscope_plotly_head LIMIT 200)
  string(REGEX MATCH "plotly\\.js v[0-9.]+" GPUSCOPE_PLOTLY_JS_VERSION "${_gpuscope_plotly_head}")
  set(GPUSCOPE_HAVE_PLOTLY ON)
  message(STATUS "plotly.js for HTML reports: ${GPUSCOPE_PLOTLY_JS} (${GPUSCOPE_PLOTLY_JS_VERSION})")
else()
  set(GPUSCOPE_HAVE_PLOTLY OFF)
  message(WARNING "plotly.js not found at ${GPUSCOPE_PLOTLY_JS}: HTML reports are disabled. "
                  "Run scripts/setup-deps.sh and configure again.")
endif()
