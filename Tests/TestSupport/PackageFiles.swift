import Foundation

/// Where the package's files are, for tests that read its sources and documents.
public enum PackageFiles {
    /// The package's root folder (this file is `Tests/TestSupport/PackageFiles.swift`).
    public static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}
