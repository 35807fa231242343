# ncurses for the live view of `gpuscope monitor` (src/telemetry/live_view_curses.cc).
# Debian: libncurses-dev. Optional: without it (GPUSCOPE_WITH_NCURSES=OFF, or the package
# missing, as on the GPU machines) gpuscope builds and `monitor` says the live view is not
# available; every other part of monitor works.
option(GPUSCOPE_WITH_NCURSES "Build the ncurses live view of gpuscope monitor" ON)
set(GPUSCOPE_HAVE_NCURSES OFF)
if(GPUSCOPE_WITH_NCURSES)
  set(CURSES_NEED_NCURSES TRUE)
  find_package(Curses QUIET)
  if(CURSES_FOUND)
    set(GPUSCOPE_HAVE_NCURSES ON)
    add_library(gpuscope_ncurses INTERFACE)
    target_include_directories(gpuscope_ncurses SYSTEM INTERFACE ${CURSES_INCLUDE_DIRS})
    target_link_libraries(gpuscope_ncurses INTERFACE ${CURSES_LIBRARIES})
    message(STATUS "ncurses for the monitor's live view: ${CURSES_LIBRARIES}")
  else()
    message(STATUS "ncurses not found (Debian: libncurses-dev): gpuscope monitor is built "
                   "without its live view")
  endif()
endif()
