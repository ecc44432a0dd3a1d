# SPDX-License-Identifier: MIT
# Script mode (cmake -P): cmake/CheckLayers.cmake fails on what it must and passes the rest.
# Each case writes a small tree (src/<layer>/, include/jsmf/<layer>/) and runs the check on it.
# Arguments: -DCHECK=<cmake/CheckLayers.cmake> -DWORK=<a scratch folder>
function(run_case name expect_failure)
  set(root "${WORK}/${name}")
  file(REMOVE_RECURSE "${root}")
  foreach(pair IN LISTS ARGN)
    string(REPLACE "=" ";" parts "${pair}")
    list(GET parts 0 path)
    list(GET parts 1 text)
    string(REPLACE "|" "\n" text "${text}")
    file(WRITE "${root}/${path}" "${text}\n")
  endforeach()
  execute_process(COMMAND "${CMAKE_COMMAND}" -DSOURCE_DIR=${root} -DSTAMP=${root}/stamp -P "${CHECK}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(expect_failure AND rc EQUAL 0)
    message(FATAL_ERROR "case ${name}: the check passed a tree it must refuse")
  elseif(NOT expect_failure AND NOT rc EQUAL 0)
    message(FATAL_ERROR "case ${name}: the check refused a clean tree:\n${err}")
  endif()
  if(expect_failure AND NOT err MATCHES "${name}")
    message(FATAL_ERROR "case ${name}: the message does not name the file:\n${err}")
  endif()
  message(STATUS "ok: ${name}")
endfunction()

# Downward includes, public and private, another library's folder, and a comment with a
# multibyte character before an include-like text: clean.
run_case(clean FALSE
  "src/fit/fit.cpp=#include \"jsmf/io/result_file.hpp\"|#include \"io/h5.hpp\"|#include <Eigen/Core>"
  "include/jsmf/model/model.hpp=// see — #include \"jsmf/fit/fit.hpp\" (a comment)|#include \"jsmf/eval/evaluate.hpp\"")
# A public include of a layer above.
run_case(public_up TRUE "src/core/public_up.cpp=#include \"jsmf/fit/fit.hpp\"")
# A private include of a layer above.
run_case(private_up TRUE "src/model/private_up.cpp=#include \"fit/dense_checkpoint.hpp\"")
# A header of a layer including one above, in angle brackets.
run_case(angle_up TRUE "include/jsmf/io/angle_up.hpp=#include <jsmf/app/commands.hpp>")
# A folder the order does not know.
run_case(newlayer TRUE "src/newlayer/x.cpp=#include \"jsmf/core/error.hpp\"")
