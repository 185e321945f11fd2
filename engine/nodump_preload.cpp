// nodump_preload — libwarden_nodump.so, put in llama-server's LD_PRELOAD by llama_server.cpp.
//
// execve() makes a process dumpable again, so llama-server would start dumpable: any process of
// the same user could read its /proc/<pid>/environ and /proc/<pid>/mem (its API key) or ptrace
// it. This constructor runs in the child before llama-server's main() and clears the flag. It
// uses only libc and is built without sanitizers (it is loaded into a program built without
// them), next to the warden binary (engine/CMakeLists.txt).
#include <sys/prctl.h>

namespace {

__attribute__((constructor)) void warden_nodump() { ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

}  // namespace
