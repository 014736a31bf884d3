# Checks the XPU plugin's SPIR-V modules with the tools Intel's stack uses:
# spirv-val (the module is valid SPIR-V for an OpenCL 2.2 environment) and
# ocloc (Intel's offline compiler turns it into GPU code for Data Center Max,
# -device pvc, and Arc, -device dg2). No GPU is needed.
#
# cmake -DMODULES="a.spv;b.spv" -DWORK_DIR=dir [-DSPIRV_VAL=...] [-DOCLOC=...]
#       -P spirv_modules_test.cmake
# A missing tool is reported; when neither exists the test prints
# "SKIPPED: no SPIR-V tools" (ctest's SKIP_REGULAR_EXPRESSION).
if(NOT MODULES)
  message(FATAL_ERROR "spirv_modules_test: no modules given (MODULES)")
endif()
if(NOT SPIRV_VAL)
  find_program(SPIRV_VAL spirv-val)
endif()
if(NOT OCLOC)
  find_program(OCLOC ocloc)
endif()
if(NOT SPIRV_VAL AND NOT OCLOC)
  message("SKIPPED: no SPIR-V tools (neither spirv-val nor ocloc found; Debian: spirv-tools, intel-opencl-icd)")
  return()
endif()
if(NOT SPIRV_VAL)
  message("note: spirv-val not found (Debian: spirv-tools): validation not checked")
endif()
if(NOT OCLOC)
  message("note: ocloc not found (Debian: intel-opencl-icd): Intel GPU compilation not checked")
endif()

set(failures 0)
foreach(module IN LISTS MODULES)
  get_filename_component(stem "${module}" NAME_WE)
  if(NOT EXISTS "${module}")
    message("FAIL ${stem}: ${module} does not exist (build the plugin first)")
    math(EXPR failures "${failures} + 1")
    continue()
  endif()
  if(SPIRV_VAL)
    execute_process(COMMAND ${SPIRV_VAL} --target-env opencl2.2 "${module}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(rc EQUAL 0)
      message("ok   ${stem}: spirv-val --target-env opencl2.2")
    else()
      message("FAIL ${stem}: spirv-val --target-env opencl2.2:\n${out}")
      math(EXPR failures "${failures} + 1")
    endif()
  endif()
  if(OCLOC)
    foreach(device pvc dg2)
      set(out_dir "${WORK_DIR}/${stem}_${device}")
      file(REMOVE_RECURSE "${out_dir}")
      file(MAKE_DIRECTORY "${out_dir}")
      execute_process(COMMAND ${OCLOC} compile -q -spirv_input -file "${module}" -device ${device}
                              -out_dir "${out_dir}"
                      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
      file(GLOB binaries "${out_dir}/*.bin")
      if(rc EQUAL 0 AND binaries)
        message("ok   ${stem}: ocloc -device ${device}")
      else()
        message("FAIL ${stem}: ocloc compile -spirv_input -device ${device} (exit ${rc}):\n${out}")
        math(EXPR failures "${failures} + 1")
      endif()
    endforeach()
  endif()
endforeach()
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} SPIR-V check(s) failed")
endif()
