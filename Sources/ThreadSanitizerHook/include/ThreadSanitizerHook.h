// ThreadSanitizer's reports, as they happen, for the conformance kit's verdicts.
//
// The runtime calls the weak hook `__tsan_on_report` once for every report it prints; this target
// defines it and, without a lock, an allocation or I/O, counts the reports and keeps the latest
// `IDP_TSAN_RING` of them (kind, accesses, stacks as program counters) in a fixed ring. The kit
// reads the count before and after each phase, as Go's `go test -race` blames a race on the test
// that ran when it was found. In a build without ThreadSanitizer the hook is never called and
// `idp_tsan_is_active()` is 0: the runtime's functions are looked up as weak symbols (with dlsym on
// Apple platforms, where the runtime is a dynamic library).
#ifndef IDP_THREAD_SANITIZER_HOOK_H
#define IDP_THREAD_SANITIZER_HOOK_H

#include <stddef.h>
#include <stdint.h>

#define IDP_TSAN_RING 128
#define IDP_TSAN_FRAMES 24
#define IDP_TSAN_ACCESSES 2

/// One memory access of a report (a data race has two), with its stack.
typedef struct {
    int32_t thread;
    int32_t size;
    int32_t isWrite;
    int32_t isAtomic;
    uintptr_t address;
    int32_t frameCount;
    uintptr_t frames[IDP_TSAN_FRAMES];
} IdpTSanAccess;

/// One report, copied out of the ring.
typedef struct {
    /// The runtime's kind: "data-race", "external-race" (a Swift access race),
    /// "lock-order-inversion", "heap-use-after-free", … A static string of the runtime.
    const char *kind;
    /// 1 for an external race tagged as a Swift access race (`__tsan_get_report_tag`).
    uintptr_t tag;
    int32_t accessCount;
    int32_t stackCount;
    int32_t mutexCount;
    int32_t threadCount;
    IdpTSanAccess accesses[IDP_TSAN_ACCESSES];
    /// The report's first stack (a lock-order inversion has one per edge of the cycle).
    int32_t stackFrameCount;
    uintptr_t stackFrames[IDP_TSAN_FRAMES];
} IdpTSanReport;

/// 1 when this process runs with ThreadSanitizer's runtime, else 0.
int idp_tsan_is_active(void);

/// Reports the runtime has printed since the process started (monotonic; acquire).
uint64_t idp_tsan_report_count(void);

/// Copies report number `index` (0-based, below `idp_tsan_report_count()`) into `out`.
/// Returns 1, or 0 when the ring has since reused its slot.
int idp_tsan_report_at(uint64_t index, IdpTSanReport *out);

/// Writes "function file:line" for a program counter into `buffer` with the runtime's own
/// symbolizer; returns 0 when there is none (a build without ThreadSanitizer).
int idp_tsan_symbolize(uintptr_t pc, char *buffer, size_t size);

/// Writes the demangled form of a Swift symbol into `buffer` with the Swift runtime's
/// `swift_demangle`; returns 0 when the symbol is not a Swift one or the runtime lacks it.
int idp_swift_demangle(const char *symbol, char *buffer, size_t size);

/// Names what the process is doing now, for the note written to stderr if it crashes on a fatal
/// signal (the previous handler, Swift's backtracer say, then runs as before). `NULL` clears it.
/// Installs the handlers on first use. The text is copied, cut to fit a note of 512 bytes.
void idp_crash_note_set(const char *text);

#endif
