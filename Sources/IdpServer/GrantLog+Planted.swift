import IdpPrimitives

// The grant log's planted bugs (`PlantedBug.idpGrantLog…`), beside it: one hook per site; a release
// build compiles each to the unplanted behaviour.
extension GrantLog {
    #if DEBUG
    /// An empty log with `planted` on.
    /// - Parameters:
    ///   - log: The log its grants' handles name.
    ///   - planted: `PlantedBug.idpGrantLog…`.
    init(_ log: GrantHandle.Log, planting planted: PlantedBugSwitch) {
        self.init(log)
        self.planted = planted
    }

    /// In the prune: whether a planted log drops grants at the head that have not expired
    /// (`idpGrantLogPrunesUnexpired`).
    var plantedPrunesUnexpired: Bool { planted.isOn(.idpGrantLogPrunesUnexpired) }
    /// In the lookup: whether a planted log accepts any handle with a live position
    /// (`idpGrantLogAcceptsAnyHandleAtItsPosition`).
    var plantedAcceptsAnyHandle: Bool { planted.isOn(.idpGrantLogAcceptsAnyHandleAtItsPosition) }
    #else
    @inline(__always) var plantedPrunesUnexpired: Bool { false }
    @inline(__always) var plantedAcceptsAnyHandle: Bool { false }
    #endif
}
