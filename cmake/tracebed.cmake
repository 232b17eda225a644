# Helpers that keep every layer's CMakeLists.txt short and alike.
#
# tracebed_layer(NAME DEPS ...): a static library from every *.cc in the
# current directory that is not a test, benchmark, fuzzer or main.
function(tracebed_layer name)
  cmake_parse_arguments(L "" "" "DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  list(FILTER sources EXCLUDE REGEX "_(test|benchmark|fuzzer|main)\\.cc$")
  add_library(${name} STATIC ${sources})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${L_DEPS})
endfunction()

# tracebed_unit_tests(NAME DEPS ...): one GoogleTest binary from every
# *_test.cc beside the layer, each case registered with CTest as `unit`.
function(tracebed_unit_tests name)
  cmake_parse_arguments(T "" "LABEL" "DEPS" ${ARGN})
  if(NOT T_LABEL)
    set(T_LABEL unit)
  endif()
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
  if(NOT tests)
    return()
  endif()
  add_executable(${name} ${tests})
  target_link_libraries(${name} PRIVATE ${T_DEPS} GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    TRACEBED_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    TRACEBED_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${name}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES LABELS ${T_LABEL}
    DISCOVERY_TIMEOUT 60)
endfunction()

# tracebed_benchmarks(NAME DEPS ...): one Google Benchmark binary from every
# *_benchmark.cc; CTest runs it in smoke mode (label `bench`).
function(tracebed_benchmarks name)
  cmake_parse_arguments(B "" "" "DEPS" ${ARGN})
  if(NOT TRACEBED_BENCHMARKS)
    return()
  endif()
  file(GLOB benches CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_benchmark.cc)
  if(NOT benches)
    return()
  endif()
  add_executable(${name} ${benches})
  target_link_libraries(${name} PRIVATE ${B_DEPS} benchmark::benchmark benchmark::benchmark_main)
  target_compile_definitions(${name} PRIVATE TRACEBED_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_test(NAME ${name}.smoke
    COMMAND ${name} --benchmark_min_time=0.01
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(${name}.smoke PROPERTIES LABELS bench)
endfunction()

# tracebed_fuzzer(NAME SOURCE DEPS ...): a libFuzzer target (clang only),
# run by CTest for a bounded time on its seed corpus (label `fuzz`). The seed
# is fixed so a CI failure replays on any machine with the same command (a
# slower machine runs a prefix of the same sequence); exploratory runs pass
# their own -seed and -max_total_time to the binary.
# A corpus kept from a campaign, fixtures/fuzz/NAME, is read as a seed too.
function(tracebed_fuzzer name source)
  cmake_parse_arguments(F "" "" "CORPUS;DEPS" ${ARGN})
  if(EXISTS ${PROJECT_SOURCE_DIR}/fixtures/fuzz/${name})
    list(APPEND F_CORPUS ${PROJECT_SOURCE_DIR}/fixtures/fuzz/${name})
  endif()
  if(NOT TRACEBED_FUZZ)
    return()
  endif()
  add_executable(${name} ${source})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_libraries(${name} PRIVATE ${F_DEPS})
  set(corpus_dir ${CMAKE_CURRENT_BINARY_DIR}/${name}_corpus)
  add_test(NAME ${name}.run
    COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=1
      $<TARGET_FILE:${name}> -seed=1 -max_total_time=30 -rss_limit_mb=2048 -print_funcs=0
      -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/${name}-
      ${corpus_dir} ${F_CORPUS})
  set_tests_properties(${name}.run PROPERTIES LABELS fuzz
    FIXTURES_REQUIRED ${name}_corpus)
  add_test(NAME ${name}.corpus COMMAND ${CMAKE_COMMAND} -E make_directory ${corpus_dir})
  set_tests_properties(${name}.corpus PROPERTIES FIXTURES_SETUP ${name}_corpus)
endfunction()

# tracebed_guest_executable(NAME SOURCES ... [LINK ...] [STRIP]): a static
# program for guest images. The guest has no libc of ours and no sanitizer
# runtime, so everything is linked in and sanitizer flags are removed.
function(tracebed_guest_executable name)
  cmake_parse_arguments(G "STRIP" "" "SOURCES;LINK" ${ARGN})
  add_executable(${name} ${G_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE ${G_LINK})
  foreach(prop COMPILE_OPTIONS LINK_OPTIONS)
    get_target_property(opts ${name} ${prop})
    if(opts)
      list(FILTER opts EXCLUDE REGEX "sanitize")
      set_target_properties(${name} PROPERTIES ${prop} "${opts}")
    endif()
  endforeach()
  target_link_options(${name} PRIVATE -static)
  if(G_STRIP)
    target_link_options(${name} PRIVATE -s)
  endif()
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
endfunction()
