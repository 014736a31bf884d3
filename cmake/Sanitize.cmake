# Sanitizer and fuzzing builds (docs/fuzzing.md).
#
#   PX_SANITIZE  empty (default), "address,undefined" or "thread": every C and
#                C++ target is compiled and linked with -fsanitize=<value>.
#                GCC and Clang both work.
#   PX_FUZZ      OFF (default). ON builds the libFuzzer targets of tests/fuzz
#                (Clang only): the libraries get coverage instrumentation
#                (-fsanitize=fuzzer-no-link) with ASan and UBSan, the fuzz
#                programs link libFuzzer's main (-fsanitize=fuzzer).
#
# UBSan stops at the first report (-fno-sanitize-recover), so a fuzzer or a
# test treats undefined behaviour like a crash. CUDA and HIP code is left
# alone: the flags go to C and C++ only.

set(PX_SANITIZE "" CACHE STRING "Sanitizers for every target: empty, address,undefined or thread")
option(PX_FUZZ "Build the libFuzzer targets (tests/fuzz) with ASan and UBSan; needs Clang" OFF)

set(PX_SANITIZER_FLAGS "")
if(PX_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "PX_FUZZ needs Clang (libFuzzer): configure with "
                        "-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++")
  endif()
  if(PX_SANITIZE AND NOT PX_SANITIZE STREQUAL "address,undefined")
    message(FATAL_ERROR "PX_FUZZ uses address,undefined; PX_SANITIZE=${PX_SANITIZE} cannot be combined with it")
  endif()
  set(PX_SANITIZE "address,undefined")
  list(APPEND PX_SANITIZER_FLAGS -fsanitize=fuzzer-no-link)
endif()

if(PX_SANITIZE)
  if(NOT PX_SANITIZE MATCHES "^(address|undefined|address,undefined|undefined,address|thread)$")
    message(FATAL_ERROR "PX_SANITIZE=${PX_SANITIZE}: use address,undefined or thread")
  endif()
  list(APPEND PX_SANITIZER_FLAGS -fsanitize=${PX_SANITIZE} -fno-omit-frame-pointer)
  if(PX_SANITIZE MATCHES "undefined")
    list(APPEND PX_SANITIZER_FLAGS -fno-sanitize-recover=undefined)
  endif()
  if(PX_SANITIZE STREQUAL "thread" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC announces TSan with __SANITIZE_THREAD__, and protobuf's headers
    # then add members to MapFieldBase: code compiled here would disagree
    # with Debian's libprotobuf about the layout (a crash in every map
    # field). The prebuilt libraries are not instrumented, so their headers
    # must not think they are.
    list(APPEND PX_SANITIZER_FLAGS -U__SANITIZE_THREAD__)
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${PX_SANITIZER_FLAGS}>")
  add_link_options("$<$<LINK_LANGUAGE:C,CXX>:-fsanitize=${PX_SANITIZE}>")
  # A C program (the C API's tests) linked by Clang gets only the C half of
  # UBSan's runtime, while the C++ libraries it loads need the C++ half (the
  # vptr checks), which itself needs libstdc++.
  if(PX_SANITIZE MATCHES "undefined" AND CMAKE_C_COMPILER_ID STREQUAL "Clang")
    add_link_options("$<$<LINK_LANGUAGE:C>:-fsanitize-link-c++-runtime;-lstdc++>")
  endif()
  message(STATUS "sanitizers: ${PX_SANITIZE}")
endif()

# Clang links the sanitizer runtimes statically into executables only, so a
# shared library or plugin built with -fsanitize has undefined __asan_* /
# __ubsan_* symbols that the program provides at load time; -Wl,--no-undefined
# (plugins, the C API) would refuse them. -z undefs, given after it, lifts
# the check for these builds only. GCC links its shared runtimes into shared
# objects too and needs nothing.
function(px_sanitize_allow_undefined_in dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "SHARED_LIBRARY" OR type STREQUAL "MODULE_LIBRARY")
      target_link_options(${t} PRIVATE "LINKER:-z,undefs")
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    px_sanitize_allow_undefined_in(${sub})
  endforeach()
endfunction()

# Other projects' headers with known UBSan reports (sanitizer_ignorelist.txt)
# go uninstrumented in `target` and whatever links it (Clang only). The file
# is named relative to the build folder, where Ninja runs the compiler, so
# that ccache serves clones in other folders.
set(PX_SANITIZER_IGNORELIST ${CMAKE_CURRENT_LIST_DIR}/sanitizer_ignorelist.txt)
function(px_sanitize_ignore_third_party target)
  if(PX_SANITIZE MATCHES "undefined" AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    file(RELATIVE_PATH list ${CMAKE_BINARY_DIR} ${PX_SANITIZER_IGNORELIST})
    target_compile_options(${target} PUBLIC "$<$<COMPILE_LANGUAGE:CXX>:-fsanitize-ignorelist=${list}>")
  endif()
endfunction()

function(px_sanitize_finish)
  if(PX_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    px_sanitize_allow_undefined_in(${PROJECT_SOURCE_DIR})
  endif()
endfunction()
