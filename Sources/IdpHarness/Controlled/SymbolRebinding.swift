#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Rebinds the calls that chosen libraries of this process make to named functions of other
/// libraries, as plthook does on ELF and fishhook on Mach-O: each such call goes through a slot of
/// the calling library's global offset table (a `JUMP_SLOT` or `GLOB_DAT` relocation), and
/// writing another function's address into that slot sends the library's calls there. Nothing
/// else changes: the function itself, and every library whose slots were not written, still
/// reach the original, and restoring the slots undoes it all.
///
/// The controlled phase rebinds Foundation's and Dispatch's calls to the pthread lock, condition
/// and dispatch semaphore functions (so `NSLock`, `NSCondition` and `DispatchSemaphore` become
/// points of its schedule), and the Swift runtime's call to `dispatch_after_f` (so `Task.sleep`
/// runs on the phase's time), only while a schedule runs.
///
/// ThreadSanitizer intercepts the same functions by defining them in the executable; a slot then
/// holds the interceptor's address, and the replacement calls that: ThreadSanitizer still sees
/// every call. A slot the dynamic linker has not bound yet (lazy binding) holds an address inside
/// its own library's PLT; its original is then what `dlsym(RTLD_DEFAULT, name)` finds, the
/// function the binding would have chosen. A slot inside the library's RELRO segment is made
/// writable for the write and read-only again after it.
///
/// Linux only (ELF, `dl_iterate_phdr`), in this one file. Apple platforms need Mach-O rebinding
/// (the `__la_symbol_ptr` and `__got` sections, through `_dyld_register_func_for_add_image`);
/// there ``isSupported`` is `false`, no slot is found, and the controlled phase says "not
/// exercised" for the primitives it would have rebound.
///
/// Not thread-safe: one owner (the phase, one schedule at a time) scans, installs and restores.
/// Other threads may call through the slots meanwhile: each slot is one aligned word, written
/// whole, so a caller reaches either the old or the new function.
final class SymbolRebinding: @unchecked Sendable {
    // Sound as Sendable: its state is changed only by its one owner (the controlled phase, which
    // runs one schedule at a time in the process), as the type's documentation requires; other
    // threads only call through the slots it writes.

    /// One slot of a library's global offset table.
    struct Slot {
        /// The library's path.
        let image: String
        let symbol: String
        let address: UnsafeMutablePointer<UInt>
        /// The page-aligned RELRO range the slot lies in, if any: made writable for a write.
        let relro: (start: UInt, length: Int)?
    }

    /// Whether rebinding works on this platform.
    static var isSupported: Bool {
        #if os(Linux) && (arch(x86_64) || arch(arm64))
        return true
        #else
        return false
        #endif
    }

    /// The slots found, in the order the libraries and their relocations were scanned.
    private(set) var slots: [Slot] = []
    /// How many libraries were loaded when the slots were found: a later scan with the same count
    /// finds the same slots.
    private var scannedImages = -1
    private let symbols: Set<String>
    private let chooses: (_ image: String, _ symbol: String) -> Bool
    /// Whether the slots hold the replacements now.
    private(set) var isInstalled = false

    /// Rebinding of `symbols` in the libraries and for the symbols `chooses` accepts (given a
    /// library's path and a symbol's name). Nothing is scanned or written yet.
    init(symbols: Set<String>, chooses: @escaping (_ image: String, _ symbol: String) -> Bool) {
        self.symbols = symbols
        self.chooses = chooses
    }

    /// The function `symbol` resolves to for every library: what the rebound calls reached before.
    static func original(_ symbol: String) -> UnsafeRawPointer? {
        #if os(Linux)
        return dlsym(UnsafeMutableRawPointer(bitPattern: 0), symbol).map { UnsafeRawPointer($0) }
        #else
        return nil
        #endif
    }

    /// Writes `replacements` (function addresses by symbol) into every chosen slot, scanning the
    /// loaded libraries first if their number changed since the last scan.
    func install(_ replacements: [String: UInt]) {
        guard Self.isSupported, !isInstalled else { return }
        scanIfNeeded()
        for slot in slots {
            guard let replacement = replacements[slot.symbol] else { continue }
            write(replacement, to: slot)
        }
        isInstalled = true
    }

    /// Writes every symbol's original function back into the slots ``install(_:)`` wrote.
    func restore() {
        guard isInstalled else { return }
        for slot in slots {
            guard let original = Self.original(slot.symbol) else { continue }
            write(UInt(bitPattern: original), to: slot)
        }
        isInstalled = false
    }

    private func write(_ value: UInt, to slot: Slot) {
        guard slot.address.pointee != value else { return }
        if let relro = slot.relro { mprotect(UnsafeMutableRawPointer(bitPattern: relro.start), relro.length, PROT_READ | PROT_WRITE) }
        slot.address.pointee = value
        if let relro = slot.relro { mprotect(UnsafeMutableRawPointer(bitPattern: relro.start), relro.length, PROT_READ) }
    }

    // MARK: Scanning the loaded libraries (ELF)

    #if os(Linux)
    /// glibc's `struct dl_phdr_info`, as far as this reads it.
    private struct ImageInfo {
        var base: UInt
        var name: UnsafePointer<CChar>?
        var headers: UnsafePointer<Elf64_Phdr>?
        var headerCount: UInt16
    }

    private typealias Visit = @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeMutableRawPointer?) -> Int32
    private typealias Iterate = @convention(c) (Visit, UnsafeMutableRawPointer?) -> Int32
    /// glibc's `dl_iterate_phdr`, looked up at run time: the Glibc module does not import it.
    private static let iterate: Iterate? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "dl_iterate_phdr").map { unsafeBitCast($0, to: Iterate.self) }

    /// What one walk over the libraries collects; reached from the C callback through its context.
    private final class Walk {
        let symbols: Set<String>
        let chooses: (String, String) -> Bool
        var slots: [Slot] = []
        var images = 0
        let countOnly: Bool

        init(symbols: Set<String>, chooses: @escaping (String, String) -> Bool, countOnly: Bool) {
            self.symbols = symbols
            self.chooses = chooses
            self.countOnly = countOnly
        }
    }

    private func scanIfNeeded() {
        guard let iterate = Self.iterate else { return }
        let count = Walk(symbols: [], chooses: { _, _ in false }, countOnly: true)
        _ = iterate(Self.visit, Unmanaged.passUnretained(count).toOpaque())
        guard count.images != scannedImages else { return }
        let walk = Walk(symbols: symbols, chooses: chooses, countOnly: false)
        _ = iterate(Self.visit, Unmanaged.passUnretained(walk).toOpaque())
        slots = walk.slots
        scannedImages = walk.images
    }

    private static let visit: Visit = { raw, _, context in
        guard let raw, let context else { return 0 }
        let walk = Unmanaged<Walk>.fromOpaque(context).takeUnretainedValue()
        walk.images += 1
        guard !walk.countOnly else { return 0 }
        let info = raw.assumingMemoryBound(to: ImageInfo.self).pointee
        SymbolRebinding.collect(info, into: walk)
        return 0
    }

    /// The slots of one library whose symbols the walk wants, from its dynamic section.
    private static func collect(_ info: ImageInfo, into walk: Walk) {
        let image = info.name.map { String(cString: $0) } ?? ""
        guard let headers = info.headers else { return }
        var dynamic: UnsafePointer<Elf64_Dyn>?
        var relro: (start: UInt, length: Int)?
        for index in 0..<Int(info.headerCount) {
            let header = headers[index]
            if header.p_type == UInt32(PT_DYNAMIC) { dynamic = UnsafePointer(bitPattern: info.base + UInt(header.p_vaddr)) }
            if header.p_type == UInt32(PT_GNU_RELRO) {
                let page = UInt(sysconf(Int32(_SC_PAGESIZE)))
                let start = (info.base + UInt(header.p_vaddr)) & ~(page - 1)
                let end = (info.base + UInt(header.p_vaddr) + UInt(header.p_memsz) + page - 1) & ~(page - 1)
                relro = (start, Int(end - start))
            }
        }
        guard var entry = dynamic else { return }
        var symbolTable: UnsafePointer<Elf64_Sym>?
        var strings: UnsafePointer<CChar>?
        var tables: [(relocations: UnsafePointer<Elf64_Rela>?, bytes: Int)] = [(nil, 0), (nil, 0)]
        // glibc relocates the dynamic section's addresses in place; the vDSO's are left as offsets.
        func address(_ value: UInt64) -> UInt { UInt(value) < info.base ? info.base + UInt(value) : UInt(value) }
        while entry.pointee.d_tag != Int64(DT_NULL) {
            let value = entry.pointee.d_un.d_ptr
            switch entry.pointee.d_tag {
            case Int64(DT_SYMTAB): symbolTable = UnsafePointer(bitPattern: address(value))
            case Int64(DT_STRTAB): strings = UnsafePointer(bitPattern: address(value))
            case Int64(DT_JMPREL): tables[0].relocations = UnsafePointer(bitPattern: address(value))
            case Int64(DT_PLTRELSZ): tables[0].bytes = Int(value)
            case Int64(DT_RELA): tables[1].relocations = UnsafePointer(bitPattern: address(value))
            case Int64(DT_RELASZ): tables[1].bytes = Int(value)
            default: break
            }
            entry += 1
        }
        guard let symbolTable, let strings else { return }
        for table in tables {
            guard let relocations = table.relocations else { continue }
            for index in 0..<(table.bytes / MemoryLayout<Elf64_Rela>.stride) {
                let relocation = relocations[index]
                guard isFunctionSlot(UInt32(truncatingIfNeeded: relocation.r_info)) else { continue }
                let symbolIndex = Int(relocation.r_info >> 32)
                guard symbolIndex != 0 else { continue }
                let name = String(cString: strings + Int(symbolTable[symbolIndex].st_name))
                guard walk.symbols.contains(name), walk.chooses(image, name),
                      let slot = UnsafeMutablePointer<UInt>(bitPattern: info.base + UInt(relocation.r_offset)) else { continue }
                let inRelro = relro.flatMap { range in UInt(bitPattern: slot) >= range.start && UInt(bitPattern: slot) < range.start + UInt(range.length) ? range : nil }
                walk.slots.append(Slot(image: image, symbol: name, address: slot, relro: inRelro))
            }
        }
    }

    /// Whether a relocation of `type` fills a slot the library calls a function through.
    private static func isFunctionSlot(_ type: UInt32) -> Bool {
        #if arch(x86_64)
        return type == 7 || type == 6 // R_X86_64_JUMP_SLOT, R_X86_64_GLOB_DAT
        #elseif arch(arm64)
        return type == 1026 || type == 1025 // R_AARCH64_JUMP_SLOT, R_AARCH64_GLOB_DAT
        #else
        return false
        #endif
    }
    #else
    private func scanIfNeeded() {}
    #endif
}
