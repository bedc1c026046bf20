# cuDNN through its header-only C++ frontend (cudnn_frontend.h), shared by the families that
# use cuDNN's graph API. scripts/install-deps.sh unpacks the frontend's headers from the PyPI
# package nvidia-cudnn-frontend into the ignored .deps/cudnn-frontend/; libcudnn itself comes
# from the CUDA installation (or the system's library path).
#
# Sets FERRITE_HAVE_CUDNN_FRONTEND (ON when headers and library are both found) and defines
# ferrite_use_cudnn_frontend(target): include dirs, libcudnn and FERRITE_HAVE_CUDNN_FRONTEND=1
# (0 when absent, so sources can throw Unsupported with the install hint instead).
set(FERRITE_HAVE_CUDNN_FRONTEND OFF)
if(FERRITE_WITH_CUDA)
  find_path(FERRITE_CUDNN_FRONTEND_INCLUDE_DIR cudnn_frontend.h
    PATHS ${PROJECT_SOURCE_DIR}/.deps/cudnn-frontend/include NO_DEFAULT_PATH)
  find_path(FERRITE_CUDNN_INCLUDE_DIR cudnn.h
    HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include /usr/include /usr/local/include)
  find_library(FERRITE_CUDNN_LIBRARY NAMES cudnn libcudnn.so.9
    HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib /usr/local/cuda/lib64)
  if(FERRITE_CUDNN_FRONTEND_INCLUDE_DIR AND FERRITE_CUDNN_INCLUDE_DIR AND FERRITE_CUDNN_LIBRARY)
    set(FERRITE_HAVE_CUDNN_FRONTEND ON)
  endif()
endif()
message(STATUS "ferrite: cuDNN frontend ${FERRITE_HAVE_CUDNN_FRONTEND} (headers: ${FERRITE_CUDNN_FRONTEND_INCLUDE_DIR}, library: ${FERRITE_CUDNN_LIBRARY})")

function(ferrite_use_cudnn_frontend target)
  if(FERRITE_HAVE_CUDNN_FRONTEND)
    target_include_directories(${target} SYSTEM PRIVATE ${FERRITE_CUDNN_FRONTEND_INCLUDE_DIR} ${FERRITE_CUDNN_INCLUDE_DIR})
    target_link_libraries(${target} PRIVATE ${FERRITE_CUDNN_LIBRARY} CUDA::nvrtc)  # nvrtc: see below
    target_compile_definitions(${target} PRIVATE FERRITE_HAVE_CUDNN_FRONTEND=1)
  else()
    target_compile_definitions(${target} PRIVATE FERRITE_HAVE_CUDNN_FRONTEND=0)
  endif()
endfunction()

# As ferrite_use_cudnn_frontend, but the frontend's include dirs and
# FERRITE_HAVE_CUDNN_FRONTEND=0/1 go only to `sources` of `target` (the translation units that
# include cudnn_frontend.h), so the command lines of the target's other sources stay as they
# were (no rebuild of the whole library, ccache hits). libcudnn is linked to `target`.
function(ferrite_use_cudnn_frontend_sources target)
  if(FERRITE_HAVE_CUDNN_FRONTEND)
    # One word each (-isystemDIR): a source's COMPILE_OPTIONS take no SHELL: groups.
    set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_OPTIONS
      -isystem${FERRITE_CUDNN_FRONTEND_INCLUDE_DIR} -isystem${FERRITE_CUDNN_INCLUDE_DIR})
    set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_DEFINITIONS FERRITE_HAVE_CUDNN_FRONTEND=1)
    # The frontend's own runtime-compiled engines (experimental/nvrtc_shim.h) call NVRTC.
    target_link_libraries(${target} PRIVATE ${FERRITE_CUDNN_LIBRARY} CUDA::nvrtc)
  else()
    set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_DEFINITIONS FERRITE_HAVE_CUDNN_FRONTEND=0)
  endif()
endfunction()
