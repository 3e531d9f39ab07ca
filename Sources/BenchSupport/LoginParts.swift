import IdpPrimitives

/// One part of a lone login: the time between two of the phases it passes (``LoginPhase``), the
/// p50 over the logins recorded, in µs.
package struct LoginPart: Codable, Sendable, Equatable {
    /// What the part covers.
    package var name: String
    /// Who does the work: `idp`, `hand-off`, `engine`, `provider` or `mc`.
    package var kind: String
    /// The part's p50, in µs.
    package var us: Double
}

/// Lone logins split at their phases: each login's ``PhaseRecorder`` read into one histogram per
/// part, one per kind of work (each login's parts of that kind added up first) and one for the
/// whole login.
package struct LoginPartsRecord: Sendable {
    /// The parts in the order a login passes them: name, kind, and the phases they run between.
    package static let parts: [(name: String, kind: String, from: LoginPhase, to: LoginPhase)] = [
        ("MC: AST client data (PKCE pair)", "mc", .started, .astClientDataReturned),
        ("engine: into getAuthorizationCode (cancellation handler, continuation)", "engine", .astClientDataReturned, .flowEntered),
        ("engine: arguments checked, flow and timeout set up, authorize request built", "engine", .flowEntered, .authorizeSent),
        ("IDP: authorize (serves the login form)", "idp", .authorizeSent, .authorizeAnswered),
        ("hand-off: the answer to an SDK thread", "hand-off", .authorizeAnswered, .answerPickedUp),
        ("engine: the form read, the step decided", "engine", .answerPickedUp, .formRead),
        ("provider: provideCredentials", "provider", .formRead, .providerReturned),
        ("engine: credentials checked, submission built", "engine", .providerReturned, .submissionSent),
        ("IDP: credentials (redirects with the code)", "idp", .submissionSent, .submissionAnswered),
        ("engine: the redirect read, the flow ended", "engine", .submissionAnswered, .completing),
        ("hand-off: the code back to the caller's task", "hand-off", .completing, .codeReturned),
        ("MC: token request built", "mc", .codeReturned, .tokenRequestSent),
        ("IDP: token endpoint", "idp", .tokenRequestSent, .tokenAnswered),
        ("MC: token response read, tokens stored", "mc", .tokenAnswered, .tokensStored),
    ]
    /// The kinds of work, in the order the report shows them.
    package static let kinds = ["idp", "hand-off", "engine", "provider", "mc"]
    /// Each part's kind, as its place in ``kinds``.
    private static let kindOfPart = parts.map { part in kinds.firstIndex(of: part.kind)! }

    private var byPart = Array(repeating: LatencyHistogram(), count: parts.count)
    private var byKind = Array(repeating: LatencyHistogram(), count: kinds.count)
    private var whole = LatencyHistogram()
    /// The OS threads (``ThreadStripe`` numbers) and CPUs the recorded logins' code came back on
    /// (``PhaseRecorder/callerPlace``).
    private var callerThreads = Set<Int>()
    private var callerCPUs = Set<Int>()

    /// An empty record.
    package init() {}

    /// Logins recorded.
    package var count: UInt64 { whole.count }

    /// Adds one login's phases.
    /// - Parameter recorder: The login's recorder.
    /// - Returns: `false`, recording nothing, when a phase is missing or out of order (the login
    ///   did not pass the phases of a lone login with one form step).
    @discardableResult
    package mutating func record(_ recorder: PhaseRecorder) -> Bool {
        var times: [UInt64] = []
        for phase in LoginPhase.allCases {
            guard let time = recorder.time(of: phase), time >= times.last ?? 0 else { return false }
            times.append(time)
        }
        var kindSums = Array(repeating: UInt64(0), count: Self.kinds.count)
        for (index, part) in Self.parts.enumerated() {
            let length = times[part.to.rawValue] - times[part.from.rawValue]
            byPart[index].record(length)
            kindSums[Self.kindOfPart[index]] += length
        }
        for (index, sum) in kindSums.enumerated() { byKind[index].record(sum) }
        whole.record(times[LoginPhase.tokensStored.rawValue] - times[LoginPhase.started.rawValue])
        if let place = recorder.callerPlace {
            callerThreads.insert(place.thread)
            if let cpu = place.cpu { callerCPUs.insert(cpu) }
        }
        return true
    }

    /// Adds every login of `other`.
    package mutating func merge(_ other: LoginPartsRecord) {
        for index in byPart.indices { byPart[index].merge(other.byPart[index]) }
        for index in byKind.indices { byKind[index].merge(other.byKind[index]) }
        whole.merge(other.whole)
        callerThreads.formUnion(other.callerThreads)
        callerCPUs.formUnion(other.callerCPUs)
    }

    /// Each part's p50, in µs.
    package var partsP50: [LoginPart] {
        Self.parts.enumerated().map { LoginPart(name: $1.name, kind: $1.kind, us: Double(byPart[$0].value(atPercentile: 50)) / 1e3) }
    }

    /// Each kind's p50 (its parts added up per login), in µs.
    package var kindsP50: [LoginPart] {
        Self.kinds.enumerated().map { LoginPart(name: $1, kind: $1, us: Double(byKind[$0].value(atPercentile: 50)) / 1e3) }
    }

    /// The recorded logins' p50, in µs.
    package var loginP50: Double { Double(whole.value(atPercentile: 50)) / 1e3 }

    /// The figures a report keeps; `nil` when no login was recorded.
    package var figures: LoginPartsFigures? {
        count == 0 ? nil : LoginPartsFigures(logins: Int(count), loginP50Us: loginP50, parts: partsP50, kinds: kindsP50,
                                             callerThreads: callerThreads.isEmpty ? nil : callerThreads.count,
                                             callerCPUs: callerCPUs.isEmpty ? nil : callerCPUs.count)
    }
}

/// Lone logins split at their phases, as a report keeps them (``LoginPartsRecord``).
package struct LoginPartsFigures: Codable, Sendable, Equatable {
    /// Logins recorded.
    package var logins: Int
    /// Their p50 from the caller's first event to its last result, in µs.
    package var loginP50Us: Double
    /// Each part's p50, in the order a login passes them.
    package var parts: [LoginPart]
    /// Each kind of work's p50 (its parts added up per login), in ``LoginPartsRecord/kinds``' order.
    package var kinds: [LoginPart]
    /// How many OS threads the logins' code came back on: the threads of Swift's pool the
    /// hand-back woke in turn. `nil` where not noted, and in older reports.
    package var callerThreads: Int? = nil
    /// How many CPUs those threads ran on as the code came back; `nil` where unknown.
    package var callerCPUs: Int? = nil

    /// The p50 of `kind`'s work, in µs; 0 if the figures have no such kind.
    package func us(of kind: String) -> Double { kinds.first { $0.kind == kind }?.us ?? 0 }

    /// "N threads / M CPUs", as far as noted; `nil` when neither was.
    package var callerPlaces: String? {
        guard let callerThreads else { return nil }
        let threads = "\(callerThreads) thread\(callerThreads == 1 ? "" : "s")"
        guard let callerCPUs else { return threads }
        return threads + " / \(callerCPUs) CPU\(callerCPUs == 1 ? "" : "s")"
    }

    enum CodingKeys: String, CodingKey {
        case logins, loginP50Us = "login_p50_us", parts, kinds, callerThreads = "caller_threads", callerCPUs = "caller_cpus"
    }
}
