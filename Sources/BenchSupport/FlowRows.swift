/// Latency percentiles, in microseconds.
package struct Percentiles: Codable, Sendable, Equatable {
    /// The percentiles p0 (the fastest) … p100 (the slowest), in µs.
    package var p0, p25, p50, p75, p90, p99, p999, p100: Double

    /// Percentiles from their values, in µs.
    /// - Parameters:
    ///   - p0: The fastest.
    ///   - p25: The 25th percentile.
    ///   - p50: The median.
    ///   - p75: The 75th percentile.
    ///   - p90: The 90th percentile.
    ///   - p99: The 99th percentile.
    ///   - p999: The 99.9th percentile.
    ///   - p100: The slowest.
    package init(p0: Double, p25: Double, p50: Double, p75: Double, p90: Double, p99: Double, p999: Double, p100: Double) {
        (self.p0, self.p25, self.p50, self.p75, self.p90, self.p99, self.p999, self.p100) = (p0, p25, p50, p75, p90, p99, p999, p100)
    }

    /// The eight values with their names, in order.
    package var named: [(name: String, value: Double)] {
        [("p0", p0), ("p25", p25), ("p50", p50), ("p75", p75), ("p90", p90), ("p99", p99), ("p999", p999), ("p100", p100)]
    }
}

/// One end-to-end cell: a scenario at one in-flight level (closed loop) or arrival rate (open).
package struct FlowRow: Codable, Sendable, Equatable {
    /// `"activation"` or `"login"`.
    package var scenario: String
    /// `"closed"` or `"open"`.
    package var mode: String
    /// Flows in flight: the closed loop's level, or the open loop's rate × p50.
    package var inFlight: Int
    /// The open loop's arrival rate; `nil` for the closed loop.
    package var offeredPerS: Double?
    /// Flows completed per second.
    package var throughputPerS: Double
    /// Flows completed in the measured time.
    package var completed: Int
    /// Flows that ended with an error.
    package var errors: Int
    /// The flows' latency percentiles, in µs.
    package var latencyUs: Percentiles
    /// The process's CPU time (user + system) over a round's measurement window divided by the
    /// flows completed in it, in µs (the median round's); what a flow costs whatever else the
    /// machine runs. `nil` in reports from before it was measured.
    package var cpuUsPerFlow: Double?
    /// The `Mutex` + dictionary lookup floor on one thread, measured for 20 ms right before each
    /// round of this closed-loop cell: the median, in ns. The unit the row's figures are judged
    /// in, measured beside them. `nil` for the open loop and in older reports.
    package var floorNs: Double?
    /// For a closed-loop cell at 1 in flight: the p50 of ``measureHandBack(samples:before:after:)``
    /// in a child task, as the closed loop's workers are, measured right before each round (the
    /// median of rounds), in µs. The thread wake-up a lone flow pays to hand its result back to
    /// the caller's task on Swift's pool, which no engine work shortens; `nil` at other levels
    /// and in older reports.
    package var handBackUs: Double?
    /// For the closed-loop login cell at 1 in flight: the IDP handling one login's requests
    /// (authorize, credentials, token, with the parameters and headers the engine and the
    /// MasterController send) directly through `IdpServer.handle`, one login at a time on
    /// one OS thread, 200 of them right before each round: the median of the rounds' p50s, in µs.
    /// The IDP's own share of the lone login; `nil` elsewhere and in older reports.
    package var idpUs: Double?
    /// For the closed-loop login cell at 1 in flight: its logins in the measurement windows, each
    /// with its phases noted (``PhaseRecorder``), split into parts (``LoginPartsRecord``); `nil`
    /// elsewhere and in older reports.
    package var loginParts: LoginPartsFigures?

    /// A flow row.
    /// - Parameters:
    ///   - scenario: `"activation"` or `"login"`.
    ///   - mode: `"closed"` or `"open"`.
    ///   - inFlight: Flows in flight.
    ///   - offeredPerS: The open loop's arrival rate; `nil` for the closed loop.
    ///   - throughputPerS: Flows completed per second.
    ///   - completed: Flows completed.
    ///   - errors: Flows that ended with an error.
    ///   - latencyUs: The latency percentiles, in µs.
    ///   - cpuUsPerFlow: CPU time per flow, in µs.
    ///   - floorNs: The 1-thread `Mutex` floor measured beside the cell, in ns.
    ///   - handBackUs: The p50 hand-back to the caller's task at 1 in flight, in µs.
    ///   - idpUs: The IDP's own work on one login's requests, at 1 in flight, in µs.
    ///   - loginParts: Lone logins split at their phases, at 1 in flight.
    package init(scenario: String, mode: String, inFlight: Int, offeredPerS: Double?, throughputPerS: Double, completed: Int, errors: Int, latencyUs: Percentiles,
                cpuUsPerFlow: Double? = nil, floorNs: Double? = nil, handBackUs: Double? = nil, idpUs: Double? = nil, loginParts: LoginPartsFigures? = nil) {
        self.scenario = scenario
        self.mode = mode
        self.inFlight = inFlight
        self.offeredPerS = offeredPerS
        self.throughputPerS = throughputPerS
        self.completed = completed
        self.errors = errors
        self.latencyUs = latencyUs
        self.cpuUsPerFlow = cpuUsPerFlow
        self.floorNs = floorNs
        self.handBackUs = handBackUs
        self.idpUs = idpUs
        self.loginParts = loginParts
    }

    enum CodingKeys: String, CodingKey {
        case scenario, mode, inFlight = "in_flight", offeredPerS = "offered_per_s", throughputPerS = "throughput_per_s", completed, errors
        case latencyUs = "latency_us", cpuUsPerFlow = "cpu_us_per_flow", floorNs = "floor_ns", handBackUs = "hand_back_us", idpUs = "idp_us"
        case loginParts = "login_parts"
    }
}

extension FlowRow {
    /// The scenario of a closed-loop cell whose flows are spread over `users` devices (a user
    /// each) instead of running on one device per flow in flight: `"login (4096 users)"`.
    /// - Parameters:
    ///   - scenario: `"login"` or `"activation"`.
    ///   - users: The devices the cell's flows are spread over.
    /// - Returns: The row's scenario.
    package static func scenario(_ scenario: String, spreadOver users: Int) -> String {
        "\(scenario) (\(users) users)"
    }

    /// Whether the row is a cell spread over more users than flows in flight
    /// (``scenario(_:spreadOver:)``).
    package var isSpreadOverUsers: Bool {
        mode == "closed" && scenario.hasSuffix(" users)")
    }

    /// The device a closed-loop worker runs its `flow`-th flow on, when `inFlight` workers share
    /// `devices` devices: worker `w` owns devices `w`, `w + inFlight`, `w + 2 × inFlight` … below
    /// `devices` and takes them in turn, so no two workers ever run on one device (a
    /// MasterController runs one login at a time) and every device is used in turn. With
    /// `devices` equal to `inFlight` each worker keeps its own device. With fewer devices than
    /// workers, worker `w` runs on device `w % devices`.
    /// - Parameters:
    ///   - worker: The worker, 0 ..< `inFlight`.
    ///   - flow: How many flows the worker ran before this one.
    ///   - inFlight: The workers of the cell, at least 1.
    ///   - devices: The devices they share, at least 1.
    /// - Returns: The device's index, 0 ..< `devices`.
    package static func device(worker: Int, flow: Int, inFlight: Int, devices: Int) -> Int {
        let inFlight = max(1, inFlight), devices = max(1, devices)
        guard devices >= inFlight else { return worker % devices }
        let owned = devices / inFlight
        return worker % inFlight + (flow % owned) * inFlight
    }
}
