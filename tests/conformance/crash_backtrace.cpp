// A conformance run that dies of a signal (a host segmentation fault inside a library call,
// an abort) prints the raw call stack before it goes, so the frame it died in is known from
// one run on the GPU machine, where there is no debugger. Frames print as "module(+offset)";
// `addr2line -f -C -e <module> <offset>` names the function (scripts/gpu-check.sh does). Installed
// at start-up, like the progress listener; the handler then restores the default action and
// re-raises, so the process still dies of the signal and ctest still reports the crash.
#include <csignal>
#include <initializer_list>

#include <execinfo.h>
#include <unistd.h>

namespace ferrite::conformance {
namespace {

void print_backtrace_and_die(int sig) {
  const char header[] = "\n*** fatal signal in the conformance program; call stack:\n";
  (void)!write(STDERR_FILENO, header, sizeof header - 1);
  void* frames[64];
  const int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);  // async-signal-safe: writes, no malloc
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

const bool installed = [] {
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc now, not inside the handler
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, print_backtrace_and_die);
  return true;
}();

}  // namespace
}  // namespace ferrite::conformance
