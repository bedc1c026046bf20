# Fails when the ferrite library exports definitions of the C++ runtime's own symbols
# (libstdc++'s locale, streams, exception machinery; libgcc's unwinder) or of the CUDA
# runtime's static archive. Such exports appear when a toolchain links a static archive into
# the library without hiding it; in a process that also loads the shared libstdc++ (NumPy,
# PyTorch) the dynamic linker then mixes the two copies and ferrite's first error message
# crashes. Weak template instantiations (std::vector<...>, std::shared_ptr<...>) are ordinary
# and allowed.
#   cmake -DLIBRARY=path/to/libferrite.so -P check_exports.cmake
find_program(NM nm)
if(NOT NM)
  message(FATAL_ERROR "nm not found (binutils): cannot inspect ${LIBRARY}")
endif()
execute_process(COMMAND ${NM} -D --defined-only ${LIBRARY} OUTPUT_VARIABLE exports RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm -D ${LIBRARY} failed (${rc})")
endif()
string(REGEX MATCHALL "[^\n]+\n" lines "${exports}")
list(LENGTH lines count)
if(count LESS 10)
  message(FATAL_ERROR "nm -D found only ${count} exported symbols in ${LIBRARY}: not the library expected")
endif()
# Mangled prefixes of runtime internals: std::locale, std::ios_base, ostream/istream members,
# codecvt, __cxa_* / __gxx_personality, _Unwind_*, operator new/delete, cudart's entry points.
set(runtime "_ZNSt6locale|_ZNSt8ios_base|_ZNSo[0-9]|_ZNSi[0-9]|_ZNKSt7codecvt|_ZSt4cout|__cxa_throw|__cxa_begin_catch|__gxx_personality_v0|_Unwind_RaiseException|_Znwm$|_ZdlPv$|cudaMalloc$|cudaLaunchKernel$")
set(bad "")
foreach(line IN LISTS lines)
  string(STRIP "${line}" line)
  string(REGEX REPLACE "^[0-9a-fA-F]+ +[A-Za-z] +" "" symbol "${line}")
  if(symbol MATCHES "^(${runtime})")
    list(APPEND bad "${symbol}")
  endif()
endforeach()
if(bad)
  list(LENGTH bad nbad)
  list(SUBLIST bad 0 8 shown)
  message(FATAL_ERROR "${LIBRARY} exports ${nbad} symbols of the C++/CUDA runtime (a static archive linked "
                      "without hiding), e.g. ${shown}")
endif()
message(STATUS "${LIBRARY}: ${count} exported symbols, none of the C++/CUDA runtime")
