# cuSPARSELt (2:4 structured sparsity) is compiled against its header only: the library is
# loaded at run time with dlopen (src/cuda/sparse/cusparselt_structured.cpp), so nothing links to
# it. scripts/install-deps.sh unpacks the header of the PyPI wheel nvidia-cusparselt-cu13 into
# the ignored .deps/cusparselt/include.
#
# ferrite_use_cusparselt_sources(target sources...): the header's directory and
# FERRITE_HAVE_CUSPARSELT=1 on those sources alone (0 when the header is absent: the
# structured products then throw Unsupported naming the install step).
set(FERRITE_HAVE_CUSPARSELT OFF)
if(FERRITE_WITH_CUDA)
  find_path(FERRITE_CUSPARSELT_INCLUDE_DIR cusparseLt.h
    PATHS ${PROJECT_SOURCE_DIR}/.deps/cusparselt/include NO_DEFAULT_PATH)
  if(FERRITE_CUSPARSELT_INCLUDE_DIR)
    set(FERRITE_HAVE_CUSPARSELT ON)
  endif()
  message(STATUS "ferrite: cuSPARSELt header ${FERRITE_HAVE_CUSPARSELT} (${FERRITE_CUSPARSELT_INCLUDE_DIR}; the library is loaded at run time)")
endif()

function(ferrite_use_cusparselt_sources target)
  if(FERRITE_HAVE_CUSPARSELT)
    set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_OPTIONS -isystem${FERRITE_CUSPARSELT_INCLUDE_DIR})
    set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_DEFINITIONS FERRITE_HAVE_CUSPARSELT=1)
  else()
    set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_DEFINITIONS FERRITE_HAVE_CUSPARSELT=0)
  endif()
  target_link_libraries(${target} PRIVATE ${CMAKE_DL_LIBS})  # dlopen
endfunction()
