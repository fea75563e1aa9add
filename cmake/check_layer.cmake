# Checks that the sources of one layer include only headers of that layer and of the layers
# it may use. Run as
#   cmake -DROOT=<source dir> -DLAYER_DIR=engine/sim -DALLOWED="engine/sim|engine/core|..."
#         -DKNOWN="engine/core|engine/config|...|messages|actors" [-DSTAMP=<file>] -P check_layer.cmake
# A project header is one whose path starts with a KNOWN layer directory; any other include
# (system, third-party, generated under the build tree) is not this check's business.
# Exits with an error naming file:line and the offending include, so an upward include
# fails the build of the layer that makes it.
cmake_minimum_required(VERSION 3.18)
string(REPLACE "|" ";" allowed "${ALLOWED}")
string(REPLACE "|" ";" known "${KNOWN}")
file(GLOB_RECURSE sources RELATIVE "${ROOT}" "${ROOT}/${LAYER_DIR}/*.hpp" "${ROOT}/${LAYER_DIR}/*.cpp")
set(problems "")
foreach(source IN LISTS sources)
  file(STRINGS "${ROOT}/${source}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" header "${line}")
    # The header's layer is the longest known directory that prefixes its path.
    set(owner "")
    foreach(dir IN LISTS known)
      string(LENGTH "${dir}" n)
      string(SUBSTRING "${header}" 0 ${n} head)
      string(LENGTH "${owner}" m)
      if(head STREQUAL dir AND n GREATER m)
        string(SUBSTRING "${header}" ${n} 1 sep)
        if(sep STREQUAL "/")
          set(owner "${dir}")
        endif()
      endif()
    endforeach()
    if(owner STREQUAL "" OR owner IN_LIST allowed)
      continue()
    endif()
    string(APPEND problems "\n  ${source}: includes ${header} (layer ${owner})")
  endforeach()
endforeach()
if(problems)
  string(REPLACE "|" ", " allowed_text "${ALLOWED}")
  message(FATAL_ERROR "layer ${LAYER_DIR} includes a header of a layer above it or beside it:${problems}\n"
                      "It may use only: ${allowed_text}. Move the code down a layer, or pass what it needs in "
                      "(see docs/architecture.md).")
endif()
if(STAMP)
  file(TOUCH "${STAMP}")
endif()
