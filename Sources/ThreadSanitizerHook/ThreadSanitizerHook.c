// See ThreadSanitizerHook.h. Everything here runs inside ThreadSanitizer's report machinery or
// beside it, so it is not instrumented (`no_sanitize("thread")`), takes no lock, allocates nothing
// and does no I/O but write(2) in the crash note. The ring is a sequence lock per slot built from
// relaxed atomic words: the runtime serializes reports, so there is one writer at a time.
#include "ThreadSanitizerHook.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#define NO_TSAN __attribute__((no_sanitize("thread")))

// The runtime's interface (compiler-rt tsan_interface.h). On Linux the runtime is linked
// statically into a ThreadSanitizer build, so weak references resolve to it there and stay NULL in
// any other build. On Apple platforms a weak reference to a missing symbol does not link, and the
// runtime is a dynamic library: there the functions are looked up with dlsym when the image loads.
typedef int (*ReportData)(void *report, const char **description, int *count, int *stack_count, int *mop_count,
                          int *loc_count, int *mutex_count, int *thread_count, int *unique_tid_count,
                          void **sleep_trace, unsigned long trace_size);
typedef int (*ReportMop)(void *report, unsigned long idx, int *tid, void **addr, int *size, int *write, int *atomic,
                         void **trace, unsigned long trace_size);
typedef int (*ReportStack)(void *report, unsigned long idx, void **trace, unsigned long trace_size);
typedef int (*ReportTag)(void *report, unsigned long *tag);
typedef void (*SymbolizePC)(void *pc, const char *fmt, char *out_buf, size_t out_buf_size);

#if defined(__APPLE__)
#include <dlfcn.h>
static ReportData get_report_data;
static ReportMop get_report_mop;
static ReportStack get_report_stack;
static ReportTag get_report_tag;
static SymbolizePC symbolize_pc;

__attribute__((constructor)) static void look_up_runtime(void) {
    get_report_data = (ReportData)dlsym(RTLD_DEFAULT, "__tsan_get_report_data");
    get_report_mop = (ReportMop)dlsym(RTLD_DEFAULT, "__tsan_get_report_mop");
    get_report_stack = (ReportStack)dlsym(RTLD_DEFAULT, "__tsan_get_report_stack");
    get_report_tag = (ReportTag)dlsym(RTLD_DEFAULT, "__tsan_get_report_tag");
    symbolize_pc = (SymbolizePC)dlsym(RTLD_DEFAULT, "__sanitizer_symbolize_pc");
}
#else
extern int __tsan_get_report_data(void *report, const char **description, int *count, int *stack_count,
                                  int *mop_count, int *loc_count, int *mutex_count, int *thread_count,
                                  int *unique_tid_count, void **sleep_trace, unsigned long trace_size)
    __attribute__((weak));
extern int __tsan_get_report_mop(void *report, unsigned long idx, int *tid, void **addr, int *size, int *write,
                                 int *atomic, void **trace, unsigned long trace_size) __attribute__((weak));
extern int __tsan_get_report_stack(void *report, unsigned long idx, void **trace, unsigned long trace_size)
    __attribute__((weak));
extern int __tsan_get_report_tag(void *report, unsigned long *tag) __attribute__((weak));
extern void __sanitizer_symbolize_pc(void *pc, const char *fmt, char *out_buf, size_t out_buf_size)
    __attribute__((weak));
#define get_report_data ((ReportData)__tsan_get_report_data)
#define get_report_mop ((ReportMop)__tsan_get_report_mop)
#define get_report_stack ((ReportStack)__tsan_get_report_stack)
#define get_report_tag ((ReportTag)__tsan_get_report_tag)
#define symbolize_pc ((SymbolizePC)__sanitizer_symbolize_pc)
#endif

extern char *swift_demangle(const char *mangled, size_t length, char *output, size_t *output_size, uint32_t flags)
    __attribute__((weak));

#define WORDS ((sizeof(IdpTSanReport) + sizeof(uintptr_t) - 1) / sizeof(uintptr_t))

typedef struct {
    // The report number the slot holds, or UINT64_MAX while it is being written.
    uint64_t sequence;
    uintptr_t words[WORDS];
} Slot;

static Slot ring[IDP_TSAN_RING];
static uint64_t reported;  // atomic
static IdpTSanReport scratch;  // filled by the (single) reporting thread, then published word by word

NO_TSAN int idp_tsan_is_active(void) {
    return get_report_data != NULL;
}

NO_TSAN uint64_t idp_tsan_report_count(void) {
    return __atomic_load_n(&reported, __ATOMIC_ACQUIRE);
}

NO_TSAN static int count_frames(const uintptr_t *frames) {
    int count = 0;
    while (count < IDP_TSAN_FRAMES && frames[count] != 0) count++;
    return count;
}

// Defined strongly here, so the runtime calls it for every report it prints (after printing).
NO_TSAN void __tsan_on_report(void *report) {
    uint64_t index = __atomic_load_n(&reported, __ATOMIC_RELAXED);
    IdpTSanReport *r = &scratch;
    for (size_t i = 0; i < sizeof(scratch); i++) ((volatile char *)r)[i] = 0;
    if (get_report_data != NULL) {
        const char *description = "unknown";
        int count = 0, stacks = 0, mops = 0, locs = 0, mutexes = 0, threads = 0, tids = 0;
        void *sleep[1] = {0};
        get_report_data(report, &description, &count, &stacks, &mops, &locs, &mutexes, &threads, &tids,
                               sleep, 1);
        r->kind = description;
        r->stackCount = stacks;
        r->mutexCount = mutexes;
        r->threadCount = threads;
        r->accessCount = mops < IDP_TSAN_ACCESSES ? mops : IDP_TSAN_ACCESSES;
        if (get_report_tag != NULL) {
            unsigned long tag = 0;
            get_report_tag(report, &tag);
            r->tag = tag;
        }
        for (int m = 0; m < r->accessCount && get_report_mop != NULL; m++) {
            IdpTSanAccess *a = &r->accesses[m];
            int tid = 0, size = 0, write = 0, atomic = 0;
            void *addr = 0;
            get_report_mop(report, (unsigned long)m, &tid, &addr, &size, &write, &atomic, (void **)a->frames,
                                  IDP_TSAN_FRAMES);
            a->thread = tid;
            a->size = size;
            a->isWrite = write;
            a->isAtomic = atomic;
            a->address = (uintptr_t)addr;
            a->frameCount = count_frames(a->frames);
        }
        if (stacks > 0 && get_report_stack != NULL) {
            get_report_stack(report, 0, (void **)r->stackFrames, IDP_TSAN_FRAMES);
            r->stackFrameCount = count_frames(r->stackFrames);
        }
    }
    Slot *slot = &ring[index % IDP_TSAN_RING];
    __atomic_store_n(&slot->sequence, UINT64_MAX, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    const uintptr_t *source = (const uintptr_t *)(const void *)r;
    for (size_t i = 0; i < WORDS; i++) __atomic_store_n(&slot->words[i], source[i], __ATOMIC_RELAXED);
    __atomic_store_n(&slot->sequence, index, __ATOMIC_RELEASE);
    __atomic_store_n(&reported, index + 1, __ATOMIC_RELEASE);
}

NO_TSAN int idp_tsan_report_at(uint64_t index, IdpTSanReport *out) {
    Slot *slot = &ring[index % IDP_TSAN_RING];
    if (__atomic_load_n(&slot->sequence, __ATOMIC_ACQUIRE) != index) return 0;
    uintptr_t *target = (uintptr_t *)(void *)out;
    for (size_t i = 0; i < WORDS; i++) target[i] = __atomic_load_n(&slot->words[i], __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return __atomic_load_n(&slot->sequence, __ATOMIC_RELAXED) == index;
}

NO_TSAN int idp_tsan_symbolize(uintptr_t pc, char *buffer, size_t size) {
    if (symbolize_pc == NULL || size == 0) return 0;
    buffer[0] = 0;
    // The runtime's frames are return addresses; step back into the call instruction.
    symbolize_pc((void *)(pc > 0 ? pc - 1 : pc), "%f %s:%l", buffer, size);
    return buffer[0] != 0;
}

int idp_swift_demangle(const char *symbol, char *buffer, size_t size) {
    if (swift_demangle == NULL || size == 0) return 0;
    size_t length = strlen(symbol);
    size_t capacity = size;
    char *result = swift_demangle(symbol, length, buffer, &capacity, 0);
    return result != NULL && buffer[0] != 0;
}

// The crash note: composed when it is set, written with one write(2) (at most 512 bytes, so a
// pipe delivers it whole even while other threads print their own crash output).
static const char prefix[] = "\nIdpHarness: the process crashed (fatal signal) while ";
static char note[512];
static int note_length;  // atomic
static struct sigaction previous[32];
static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE};
static int installed;  // atomic

NO_TSAN static void on_fatal_signal(int signal, siginfo_t *info, void *context) {
    (void)info;
    (void)context;
    int length = __atomic_load_n(&note_length, __ATOMIC_ACQUIRE);
    if (length > 0) {
        ssize_t ignored = write(2, note, (size_t)length);
        (void)ignored;
    }
    // Hand the signal to whoever had it before: the faulting instruction runs again, or abort()
    // raises again, and the previous handler (or the default action) takes over.
    sigaction(signal, &previous[signal], NULL);
}

NO_TSAN void idp_crash_note_set(const char *text) {
    if (__atomic_exchange_n(&installed, 1, __ATOMIC_ACQ_REL) == 0) {
        for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
            struct sigaction action;
            memset(&action, 0, sizeof(action));
            action.sa_sigaction = on_fatal_signal;
            action.sa_flags = SA_SIGINFO | SA_ONSTACK;
            sigemptyset(&action.sa_mask);
            sigaction(fatal[i], &action, &previous[fatal[i]]);
        }
    }
    __atomic_store_n(&note_length, 0, __ATOMIC_RELEASE);
    if (text == NULL) return;
    int length = 0;
    for (size_t i = 0; i + 1 < sizeof(prefix); i++) __atomic_store_n(&note[length++], prefix[i], __ATOMIC_RELAXED);
    // Keep room for the closing line break.
    for (size_t i = 0; text[i] != 0 && length < (int)sizeof(note) - 1; i++) {
        __atomic_store_n(&note[length++], text[i], __ATOMIC_RELAXED);
    }
    __atomic_store_n(&note[length++], '\n', __ATOMIC_RELAXED);
    __atomic_store_n(&note_length, length, __ATOMIC_RELEASE);
}
