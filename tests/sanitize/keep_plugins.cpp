// SPDX-License-Identifier: MIT
// Linked into every executable of the sanitized build only (JSMF_SANITIZE). Open MPI loads
// its plugins (mca_*.so) with dlopen and unloads them in MPI_Finalize; the memory they
// keep until then is reported by LeakSanitizer at exit, when their code is gone, as frames
// of "<unknown module>" that no suppression can name. With dlclose a no-op (this
// definition, exported from the executable, is the one libopen-pal's calls bind to) the
// frames keep their library names and tests/sanitize/lsan.supp can list them with a reason.
// Unloading nothing at exit changes nothing else.
extern "C" int dlclose(void* /*handle*/) { return 0; }
