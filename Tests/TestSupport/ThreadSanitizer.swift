import Foundation

/// Whether the tests run under ThreadSanitizer, for tests that scale their work down there (each
/// lock is about twenty times slower under it).
public enum ThreadSanitizer {
    /// Whether this process runs with ThreadSanitizer's runtime (built with `--sanitize=thread`).
    public static var isActive: Bool { dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil }
}
