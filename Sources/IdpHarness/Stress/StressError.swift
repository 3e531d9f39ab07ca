import Foundation
import IdpPrimitives

/// A malformed reproducer or setting.
public struct StressError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is malformed, as a sentence.
    public let description: String
    /// An error.
    ///
    /// - Parameter description: What is malformed.
    public init(_ description: String) { self.description = description }
}
