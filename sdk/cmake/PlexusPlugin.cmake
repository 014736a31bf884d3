# px_add_plugin(NAME SOURCES ... [DEPS ...] [OUTPUT_DIRECTORY dir])
#
# Builds a Plexus device plugin: a MODULE library that sees only the plugin
# ABI, the SDK and the libraries named in DEPS. It is linked with
# -Wl,--no-undefined, so any reference to a core symbol fails the build, and
# exports only its own symbols marked PX_PLUGIN_EXPORT. Usable out of tree:
# include this file and provide targets plexus::plugin_api and plexus::sdk.
function(px_add_plugin name)
  cmake_parse_arguments(ARG "" "OUTPUT_DIRECTORY" "SOURCES;DEPS" ${ARGN})
  add_library(${name} MODULE ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE plexus::plugin_api plexus::sdk ${ARG_DEPS})
  set_target_properties(${name} PROPERTIES
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${name} PRIVATE -Wl,--no-undefined)
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  elseif(DEFINED PX_PLUGIN_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${PX_PLUGIN_OUTPUT_DIRECTORY})
  endif()
  if(TARGET ${name} AND NOT ARG_OUTPUT_DIRECTORY AND DEFINED PX_PLUGIN_INSTALL_DIR)
    install(TARGETS ${name} LIBRARY DESTINATION ${PX_PLUGIN_INSTALL_DIR})
  endif()
endfunction()
