extension ControlledScheduler {
    /// An async participant's hold on its turn, carried by its task (and the tasks it starts).
    package struct AsyncTurn: Sendable {
        let scheduler: ObjectIdentifier
        let participant: Int
    }
}
