# Building Plexus device plugins. Used in two places with the same code:
# the Plexus source tree (included by the top-level CMakeLists.txt) and an
# installed SDK (included by PlexusConfig.cmake, found with
# find_package(Plexus) or find_package(PlexusPluginSDK)).
#
# plexus_add_plugin(NAME SOURCES src... [DEPS lib...]
#                   [OUTPUT_DIRECTORY dir] [INSTALL_DESTINATION dir]
#                   [NO_VERSION_SCRIPT])
#
#   Builds a MODULE library NAME (file libNAME.so; name it plexus_plugin_<x>
#   so that Plexus discovers it in a plexus-plugins folder) that sees only the
#   plugin ABI, the SDK and the libraries in DEPS, with the flags every plugin
#   needs:
#   - hidden visibility for C and C++ (and hidden inline functions);
#   - -Wl,--no-undefined: a reference to anything the plugin does not link
#     (a Plexus core symbol, say) fails the link, not the load;
#   - a version script (plexus_plugin_exports.map, beside this file) that
#     exports PX_PluginProbe and PX_PluginInitialize and makes everything else
#     local, including what libstdc++'s headers mark default, which hidden
#     visibility does not cover;
#   - C++17.
#   OUTPUT_DIRECTORY: where the .so is written (default: the usual place, or
#   PX_PLUGIN_OUTPUT_DIRECTORY when that variable is set).
#   INSTALL_DESTINATION: adds an install() rule, e.g. lib/plexus-plugins
#   under a Plexus prefix, where Plexus discovers it (default: none, or
#   PX_PLUGIN_INSTALL_DIR when that variable is set and no OUTPUT_DIRECTORY
#   is given).

# The version script, for builds that do not use plexus_add_plugin.
set(PLEXUS_PLUGIN_EXPORTS_MAP "${CMAKE_CURRENT_LIST_DIR}/plexus_plugin_exports.map")

function(plexus_add_plugin name)
  cmake_parse_arguments(ARG "NO_VERSION_SCRIPT" "OUTPUT_DIRECTORY;INSTALL_DESTINATION"
                        "SOURCES;DEPS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "plexus_add_plugin(${name}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "plexus_add_plugin(${name}): no SOURCES")
  endif()
  foreach(dep Plexus::plugin_api Plexus::sdk)
    if(NOT TARGET ${dep})
      message(FATAL_ERROR "plexus_add_plugin(${name}): target ${dep} is missing; "
                          "call find_package(Plexus) first")
    endif()
  endforeach()
  set(exports_map "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/plexus_plugin_exports.map")
  add_library(${name} MODULE ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE Plexus::plugin_api Plexus::sdk ${ARG_DEPS})
  # C++17 for the SDK's C++ headers, unless the project asks for newer.
  if(NOT CMAKE_CXX_STANDARD OR CMAKE_CXX_STANDARD LESS 17)
    set_target_properties(${name} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
  endif()
  set_target_properties(${name} PROPERTIES
    PREFIX "lib"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON)
  target_link_options(${name} PRIVATE -Wl,--no-undefined)
  if(NOT ARG_NO_VERSION_SCRIPT)
    target_link_options(${name} PRIVATE "-Wl,--version-script=${exports_map}")
    set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS "${exports_map}")
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  elseif(DEFINED PX_PLUGIN_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${PX_PLUGIN_OUTPUT_DIRECTORY})
  endif()
  if(ARG_INSTALL_DESTINATION)
    install(TARGETS ${name} LIBRARY DESTINATION ${ARG_INSTALL_DESTINATION})
  elseif(NOT ARG_OUTPUT_DIRECTORY AND PX_PLUGIN_INSTALL_DIR)
    install(TARGETS ${name} LIBRARY DESTINATION ${PX_PLUGIN_INSTALL_DIR})
  endif()
endfunction()

# plexus_add_plugin_check_test(TEST_NAME PLUGIN_TARGET [TOOL_ARGS...])
#
# Adds a CTest test that runs the conformance tool, plexus-plugin-check, on
# the plugin built by PLUGIN_TARGET (passing TOOL_ARGS before the plugin
# file, e.g. --only kernels). Does nothing, with a message, when the tool is
# not installed with this SDK. Call enable_testing() first.
function(plexus_add_plugin_check_test test_name plugin)
  if(TARGET Plexus::plugin_check)
    set(tool Plexus::plugin_check)
  elseif(TARGET plexus-plugin-check)
    set(tool plexus-plugin-check)
  else()
    message(STATUS "plexus-plugin-check is not installed: no test ${test_name}")
    return()
  endif()
  add_test(NAME ${test_name} COMMAND ${tool} ${ARGN} $<TARGET_FILE:${plugin}>)
endfunction()
