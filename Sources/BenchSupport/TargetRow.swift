/// One target of the benchmark (a limit the engine is held to), as measured in this run.
package struct TargetRow: Codable, Sendable, Equatable {
    /// The target's name.
    package var name: String
    /// The measured figure.
    package var value: Double
    /// The limit the figure is held to.
    package var limit: Double
    /// Whether the figure is within the limit.
    package var met: Bool
    /// How the figure was computed, in words.
    package var detail: String
    /// The cores the target needs, set only where the machine had fewer: the figure is shown, but
    /// judged on a machine with that many (``verdict`` is "n/a: needs N cores"), not against this one.
    package var needsCores: Int?

    /// A target row.
    /// - Parameters:
    ///   - name: The target's name.
    ///   - value: The measured figure.
    ///   - limit: The limit.
    ///   - met: Whether the figure is within the limit.
    ///   - detail: How the figure was computed.
    ///   - needsCores: The cores the target needs, where the machine had fewer; `nil` otherwise.
    package init(name: String, value: Double, limit: Double, met: Bool, detail: String, needsCores: Int? = nil) {
        self.name = name
        self.value = value
        self.limit = limit
        self.met = met
        self.detail = detail
        self.needsCores = needsCores
    }

    /// "met", "MISSED", or "n/a: needs N cores" where the machine had fewer cores than the target needs.
    package var verdict: String {
        if let needsCores { return "n/a: needs \(needsCores) cores" }
        return met ? "met" : "MISSED"
    }

    /// Whether the figure missed a limit this machine could meet.
    package var missed: Bool { needsCores == nil && !met }

    enum CodingKeys: String, CodingKey {
        case name, value, limit, met, detail, needsCores = "needs_cores", verdict
    }

    /// Reads a row; `needs_cores` may be absent (older reports, or a machine with the cores).
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        value = try container.decode(Double.self, forKey: .value)
        limit = try container.decode(Double.self, forKey: .limit)
        met = try container.decode(Bool.self, forKey: .met)
        detail = try container.decode(String.self, forKey: .detail)
        needsCores = try container.decodeIfPresent(Int.self, forKey: .needsCores)
    }

    /// Writes the row with its verdict, as the text and RESULTS.md show it.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(value, forKey: .value)
        try container.encode(limit, forKey: .limit)
        try container.encode(met, forKey: .met)
        try container.encode(detail, forKey: .detail)
        try container.encodeIfPresent(needsCores, forKey: .needsCores)
        try container.encode(verdict, forKey: .verdict)
    }
}
