import IdpPrimitives

// The step rules' planted bugs (`PlantedBug.idpLocksOneGuessLate`, `idpIssuesCodeForLoginHint`),
// beside them: one hook per site; a release build compiles each to the unplanted behaviour.
extension StepRules {
    #if DEBUG
    /// In the lockout: whether a planted IDP locks one wrong secret after the policy's limit.
    var plantedLocksOneGuessLate: Bool { planted.isOn(.idpLocksOneGuessLate) }
    /// In the code's issue: whether a planted IDP issues an activation's code for its login hint.
    var plantedIssuesCodeForHint: Bool { planted.isOn(.idpIssuesCodeForLoginHint) }
    #else
    @inline(__always) var plantedLocksOneGuessLate: Bool { false }
    @inline(__always) var plantedIssuesCodeForHint: Bool { false }
    #endif
}
