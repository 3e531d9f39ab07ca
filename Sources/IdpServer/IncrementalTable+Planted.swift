import IdpPrimitives

// The incremental table's planted bugs (`PlantedBug.idpTable…`), beside it: one hook per site; a
// release build compiles each to the unplanted behaviour.
extension IncrementalTable {
    #if DEBUG
    /// An empty table with `planted` on.
    /// - Parameter planted: `PlantedBug.idpTable…`.
    init(planting planted: PlantedBugSwitch) {
        self.init()
        self.planted = planted
    }

    /// In the draining table's lookup: whether a planted table probes a key whose home the walk
    /// has passed from its home (`idpTableProbesPassedHomesFromHome`).
    var plantedProbesFromHome: Bool { planted.isOn(.idpTableProbesPassedHomesFromHome) }
    /// In the drain: whether a planted table lets the draining table go after one step
    /// (`idpTableRetiresBeforeDrained`).
    var plantedRetiresEarly: Bool { planted.isOn(.idpTableRetiresBeforeDrained) }
    #else
    @inline(__always) var plantedProbesFromHome: Bool { false }
    @inline(__always) var plantedRetiresEarly: Bool { false }
    #endif
}
