# rlvr_module(NAME SOURCES ... [DEPS ...] [LIBS ...])
# Builds the objects of one folder once, as OBJECT library rlvr_<NAME>_obj, and
# a static library rlvr_<NAME> from them for tests that need only that module
# and its dependencies (a half-finished module elsewhere does not block them).
# librlvr.a is assembled from all modules' objects by rlvr_combined_library().
function(rlvr_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS;LIBS" ${ARGN})
  add_library(rlvr_${name}_obj OBJECT ${M_SOURCES})
  target_include_directories(rlvr_${name}_obj PUBLIC ${CMAKE_SOURCE_DIR})
  foreach(d IN LISTS M_DEPS)
    target_link_libraries(rlvr_${name}_obj PUBLIC rlvr_${d})
  endforeach()
  target_link_libraries(rlvr_${name}_obj PUBLIC ${M_LIBS})
  add_library(rlvr_${name} STATIC $<TARGET_OBJECTS:rlvr_${name}_obj>)
  target_link_libraries(rlvr_${name} PUBLIC rlvr_${name}_obj)
  set_property(GLOBAL APPEND PROPERTY RLVR_MODULE_OBJECTS rlvr_${name}_obj)
endfunction()

function(rlvr_combined_library)
  get_property(objs GLOBAL PROPERTY RLVR_MODULE_OBJECTS)
  set(srcs "")
  foreach(o IN LISTS objs)
    list(APPEND srcs $<TARGET_OBJECTS:${o}>)
  endforeach()
  add_library(rlvr STATIC ${srcs})
  target_link_libraries(rlvr PUBLIC ${objs})
endfunction()

# rlvr_test(NAME SOURCES ... LINK ... [LABELS ...] [TIMEOUT s])
function(rlvr_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LINK;LABELS;ARGS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LINK})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/tests)
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "RLVR_SOURCE_DIR=${CMAKE_SOURCE_DIR};RLVR_BINARY_DIR=${CMAKE_BINARY_DIR};OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
  if(T_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()

# Compiles text files into C strings an installed rlvr needs without its
# source tree: ${CMAKE_CURRENT_BINARY_DIR}/<out> gets one
# `static const char <prefix><file name without .in>[] = "...";` per file
# (as a C identifier), regenerated whenever a file changes. file(READ), not
# file(STRINGS): the latter splits at non-ASCII bytes.
function(rlvr_embed_texts out prefix)
  set(inc "")
  foreach(path IN LISTS ARGN)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${path})
    file(READ ${path} text)
    string(REPLACE "\\" "\\\\" text "${text}")
    string(REPLACE "\"" "\\\"" text "${text}")
    string(REPLACE "\n" "\\n\"\n\"" text "${text}")
    get_filename_component(name ${path} NAME)
    string(REGEX REPLACE "\\.in$" "" name "${name}")
    string(MAKE_C_IDENTIFIER "${prefix}${name}" id)
    string(APPEND inc "static const char ${id}[] =\n\"${text}\";\n")
  endforeach()
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/${out} "${inc}")
endfunction()

# Labels `fast` every test of the calling directory named in RLVR_FAST_TESTS
# (tests/CMakeLists.txt); call it at the end of a tests/<folder>/CMakeLists.txt.
function(rlvr_fast_labels)
  get_directory_property(tests TESTS)
  foreach(t IN LISTS tests)
    if(t IN_LIST RLVR_FAST_TESTS)
      get_test_property(${t} LABELS labels)
      if(NOT "fast" IN_LIST labels)
        set_property(TEST ${t} APPEND PROPERTY LABELS fast)
      endif()
    endif()
  endforeach()
endfunction()
