/// Whether an entry point of ``ProviderConformanceKit`` or ``ProviderBenchmark`` makes one
/// provider instance per user or one instance for every user. Every entry point takes it as its
/// `instances:` argument, so a call says which it runs, and the closure after it takes one user
/// or all of them to match.
///
/// ```swift
/// // An app that makes a provider for the user who signs in: one instance per user.
/// let perUser = await ProviderConformanceKit.run(name: "MyProvider", instances: .perUser) { user in
///     MyProvider(user)
/// }
/// // An app with one provider for everyone (the Kotlin samples' `companion object`).
/// let shared = await ProviderConformanceKit.run(name: "MyProvider", instances: .shared) { users in
///     MyProvider(users)
/// }
/// ```
public enum ProviderInstances {
    /// One instance per user, shared by that user's flows: the closure is given one
    /// ``ProviderConformanceKit/User`` and is called for every instance the entry point needs.
    /// Two instances of one user may answer at once, as two screens of an app that each make
    /// their own handler do.
    public enum PerUser: Sendable {
        /// One instance per user.
        case perUser
    }

    /// One instance for every user: the closure is given all the users at once and returns the
    /// instance every flow and every thread calls.
    public enum Shared: Sendable {
        /// One instance for every user.
        case shared
    }
}
