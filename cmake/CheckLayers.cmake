# SPDX-License-Identifier: MIT
# Script mode (cmake -P): the layer order, enforced. Every file of src/<layer>/ and
# include/jsmf/<layer>/ may include jsmf headers of its own layer and of the layers listed
# before it, never of one after it (the README's map of the tree, arrows pointing down).
# A violation, or a folder missing from the order, fails the build with the file, the line
# and the two layers. Writes STAMP when the tree is clean.
# Arguments: -DSOURCE_DIR=<the checkout> -DSTAMP=<file to touch>
set(order
    core mpi corpus distmat solvers
    cooc synth infer rectify recover anchors anchorfree
    eval lowrank model report io prepare fit app)

set(errors "")
foreach(root IN ITEMS "${SOURCE_DIR}/src" "${SOURCE_DIR}/include/jsmf")
  file(GLOB layers RELATIVE "${root}" "${root}/*")
  foreach(layer IN LISTS layers)
    if(NOT IS_DIRECTORY "${root}/${layer}")
      continue()
    endif()
    list(FIND order "${layer}" rank)
    if(rank EQUAL -1)
      string(APPEND errors "  ${root}/${layer}/: a layer missing from cmake/CheckLayers.cmake's order\n")
      continue()
    endif()
    file(GLOB_RECURSE files "${root}/${layer}/*.hpp" "${root}/${layer}/*.cpp" "${root}/${layer}/*.h")
    foreach(file IN LISTS files)
      # Public headers as "jsmf/<layer>/…", private ones (src/ is on the library's include
      # path) as "<layer>/…": both name a layer. UTF-8, so that a multibyte character in a
      # comment does not split a line into strings that look like includes.
      file(STRINGS "${file}" includes ENCODING UTF-8 REGEX "^[ \t]*#[ \t]*include[ \t]+[\"<](jsmf/)?[a-z_]+/")
      foreach(line IN LISTS includes)
        string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+[\"<](jsmf/)?([a-z_]+)/.*$" "\\2" used "${line}")
        string(REGEX MATCH "^[ \t]*#[ \t]*include[ \t]+[\"<]jsmf/" public "${line}")
        list(FIND order "${used}" used_rank)
        if(used_rank EQUAL -1 AND NOT public)
          continue()  # "<folder>/…" of another library (Eigen/…, boost/…, CLI/…): not a layer
        endif()
        if(used_rank GREATER rank OR used_rank EQUAL -1)
          file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
          string(STRIP "${line}" line)
          string(APPEND errors "  ${rel}: ${line} (layer ${layer} includes ${used}, which is above it)\n")
        endif()
      endforeach()
    endforeach()
  endforeach()
endforeach()

if(NOT errors STREQUAL "")
  message(FATAL_ERROR "the layer order is broken (cmake/CheckLayers.cmake, README's map of the tree):\n${errors}")
endif()
file(TOUCH "${STAMP}")
