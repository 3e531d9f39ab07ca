import Foundation
import IdpPrimitives
import IdpSdk
import IdpServer
import McSdk

extension SystemStress {
    /// One replay of a reproducer: what it broke and which interleavings it reached.
    public struct Replay: Sendable {
        /// The invariants this replay broke; empty when all held.
        public var violations: [String]
        /// How often this replay reached each interleaving.
        public var interleavings: [Interleaving: Int]
        /// What the participants its violations name did, oldest first (all participants' when it
        /// broke nothing): the replay's account of the schedule.
        public var eventLog: [String] = []
    }
}
