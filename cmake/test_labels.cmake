# gpuscope_label_discovered_tests(TARGET LABEL...): CTest labels for every test that
# gtest_discover_tests finds in TARGET. Passing them through gtest_discover_tests(PROPERTIES
# LABELS "a;b") does not work with CMake 3.25: the list is split, so LABELS gets "a" and "b" is
# read as a property name (swallowing what follows), and `ctest -L b` finds nothing. Set after
# discovery instead, from a file CTest includes after the discovered list.
function(gpuscope_label_discovered_tests target)
  list(JOIN ARGN "\\;" labels)
  set(file "${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake")
  file(WRITE "${file}" "if(${target}_TESTS)\n"
       "  set_tests_properties(\${${target}_TESTS} PROPERTIES LABELS \"${labels}\")\n"
       "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${file}")
endfunction()
