# logfold_part(): one part of logfold (a folder) as a static library whose allowed dependencies
# are declared once. The declared parts are linked; an #include of any other part's header
# fails the build (cmake/check_part_includes.cmake), so the layering cannot erode silently.
#
#   logfold_part(NAME <part> DIR <folder> [DEPENDS <part>...] [LIBS <target>...])
#
# <part> names the library logfold_<part> (pipeline's is `pipeline`, the composition root's
# `logfold_daemon`); DEPENDS lists the
# parts it may include and links; LIBS are third-party targets it links publicly.
set(LOGFOLD_CHECK_INCLUDES_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/check_part_includes.cmake)

function(logfold_part_target part out)
  if(part STREQUAL pipeline)
    set(${out} pipeline PARENT_SCOPE)
  elseif(part STREQUAL root)
    set(${out} logfold_daemon PARENT_SCOPE)
  else()
    set(${out} logfold_${part} PARENT_SCOPE)
  endif()
endfunction()

function(logfold_part)
  cmake_parse_arguments(P "" "NAME;DIR" "DEPENDS;LIBS;EXTRA_SOURCES" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${P_DIR}/*.cc ${P_DIR}/*.h)
  # A sub-folder that is a part of its own is not ours (e.g. daemon/outputs/http belongs to
  # outputs, but daemon/ holds every part and only the root's files are the root's).
  if(P_NAME STREQUAL root)
    file(GLOB sources CONFIGURE_DEPENDS ${P_DIR}/*.cc ${P_DIR}/*.h)
    list(FILTER sources EXCLUDE REGEX "/main\\.cc$")
  endif()
  set(cc_sources ${sources})
  list(FILTER cc_sources INCLUDE REGEX "\\.cc$")
  logfold_part_target(${P_NAME} lib)
  add_library(${lib} STATIC ${cc_sources} ${P_EXTRA_SOURCES})
  target_include_directories(${lib} PUBLIC ${PROJECT_SOURCE_DIR})
  foreach(dep IN LISTS P_DEPENDS)
    logfold_part_target(${dep} dep_lib)
    target_link_libraries(${lib} PUBLIC ${dep_lib})
  endforeach()
  target_link_libraries(${lib} PUBLIC ${P_LIBS})
  logfold_warnings(${lib})
  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/${lib}_includes.stamp)
  add_custom_command(
    OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DPART=${P_NAME} "-DALLOWED=${P_DEPENDS}" "-DSOURCES=${sources}"
            -DSTAMP=${stamp} -P ${LOGFOLD_CHECK_INCLUDES_SCRIPT}
    DEPENDS ${sources} ${LOGFOLD_CHECK_INCLUDES_SCRIPT}
    COMMENT "Checking that ${P_NAME} includes only its allowed parts" VERBATIM)
  add_custom_target(${lib}_includes DEPENDS ${stamp})
  add_dependencies(${lib} ${lib}_includes)
endfunction()
