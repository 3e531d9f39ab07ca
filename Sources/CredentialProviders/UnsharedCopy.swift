/// Copies whose storage no other copy holds: a thread that retains and releases such a copy writes
/// only its own memory, never a reference count that threads on other cores write too.
enum UnsharedCopy {
    /// `string`, with storage of its own when it has any: a string of up to 15 UTF-8 bytes is
    /// stored inline and is returned as it is.
    static func of(_ string: String) -> String {
        let count = string.utf8.count
        guard count > 15 else { return string }
        var source = string
        return source.withUTF8 { bytes in
            String(unsafeUninitializedCapacity: count) { target in
                _ = target.initialize(fromContentsOf: bytes)
                return count
            }
        }
    }

    /// `values` in a dictionary built here, keys and values copied with ``of(_:)``.
    static func of(_ values: [String: String]) -> [String: String] {
        var copy = [String: String](minimumCapacity: values.count)
        for (id, value) in values { copy[of(id)] = of(value) }
        return copy
    }
}
