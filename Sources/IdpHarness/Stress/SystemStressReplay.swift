import Foundation
import IdpPrimitives
import IdpSdk
import IdpServer
import McSdk

extension SystemStress {
    /// One replay of a reproducer: what it broke and which interleavings it reached.
    package struct Replay: Sendable {
        /// The invariants this replay broke; empty when all held.
        package var violations: [String]
        /// How often this replay reached each interleaving.
        package var interleavings: [Interleaving: Int]
        /// What the participants its violations name did, oldest first (all participants' when it
        /// broke nothing): the replay's account of the schedule.
        package var eventLog: [String] = []
    }
}
