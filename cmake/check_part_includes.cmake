# Fails the build when a source of one part of logfold includes a header of a part it may not
# depend on. Run as a build step by logfold_part() (cmake/logfold_part.cmake):
#   cmake -DPART=<name> -DALLOWED=<a;b> -DSOURCES=<files> -DSTAMP=<file> -P check_part_includes.cmake
# A header is named by its folder: "pipeline/x.h" is part pipeline, "daemon/outputs/http/x.h"
# part outputs, "daemon/server.h" the composition root (never includable by a part).
cmake_minimum_required(VERSION 3.22)
set(violations "")
foreach(src IN LISTS SOURCES)
  file(STRINGS "${src}" lines REGEX "^[ \t]*#[ \t]*include[ \t]+\"(pipeline|daemon)/")
  foreach(line IN LISTS lines)
    string(REGEX MATCH "\"([^\"]+)\"" _ "${line}")
    set(header "${CMAKE_MATCH_1}")
    if(header MATCHES "^pipeline/")
      set(target_part pipeline)
    elseif(header MATCHES "^daemon/([a-z_]+)/")
      set(target_part "${CMAKE_MATCH_1}")
    else()
      set(target_part root)
    endif()
    if(NOT target_part STREQUAL PART AND NOT target_part IN_LIST ALLOWED)
      string(APPEND violations "\n  ${src}: includes ${header} (part ${target_part})")
    endif()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "part ${PART} may depend only on: ${ALLOWED}. Forbidden includes:${violations}")
endif()
file(TOUCH "${STAMP}")
