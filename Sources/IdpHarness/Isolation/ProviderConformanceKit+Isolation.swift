extension ProviderConformanceKit {
    /// Where a run of the kit happens: in a child process, so that a provider that crashes the
    /// process yields a verdict, or in the calling process.
    ///
    /// ```swift
    /// var configuration = ProviderConformanceKit.Configuration()
    /// configuration.isolation = .inProcess      // opt out: no child process
    /// ```
    ///
    /// The child is this same executable started again: under Swift Testing, with a filter that
    /// selects the calling test, which runs up to the same kit call and runs it there; in a plain
    /// executable, with the same arguments. So call the kit directly from the `@Test` function:
    /// from a helper function the filter selects no test. A run whose child did not reach the kit
    /// call runs in the calling process instead (``automatic``) and its report says why, or does
    /// not run (``childProcess``).
    public enum Isolation: String, Sendable, Codable, CaseIterable {
        /// A child process where this platform can start one (Linux, macOS) and the call site lets
        /// the child find the kit call; otherwise the calling process, with the report saying why.
        /// The default.
        case automatic
        /// The calling process: a provider that crashes takes the process down with it.
        case inProcess
        /// A child process, or no run at all: where no child can run the call, the report fails
        /// with a check that says why, instead of risking the calling process.
        case childProcess
    }
}
