/// A value handed to other threads without the compiler's `Sendable` check: the provider under
/// test (or measurement), which the kit must share across its threads *before* anyone knows it is
/// safe to share.
///
/// `@unchecked Sendable`, and sound for the kit's part: `value` is a `let`, set before the box is
/// handed over (by thread creation or a task), so every thread sees it fully initialised. Whether
/// the value itself tolerates calls from several threads is exactly what the kit tests; a provider
/// that does not is reported by the hammer and ThreadSanitizer, not prevented here. Works whether
/// or not `IdpSdkInteractionInterface` refines `Sendable`.
final class Unverified<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) { self.value = value }
}
