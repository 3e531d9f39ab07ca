/// Decoded `name=value` parameters whose names are unique: an authorization request's query, a
/// form body, a redirect's fragment.
///
/// A request carries a handful of parameters, so they are kept as pairs in order and found by
/// comparing names, which costs less than hashing each name into a dictionary built for one
/// request. Past `indexedFrom` pairs a set of the names keeps the check for repeats linear.
///
/// ```swift
/// let parameters = try FormParameters(uniquelyNamed: FormURLEncoding.decode("code=abc&state=xyz"))
/// parameters["code"] // "abc"
/// ```
package struct FormParameters: Sendable {
    /// The parameters, in the order they came.
    package private(set) var pairs: [(name: String, value: String)] = []
    /// The names, once there are more than ``indexedFrom`` (a hostile request may carry thousands).
    private var names: Set<String>?

    /// From this many pairs on, repeats are found through a set of the names.
    static let indexedFrom = 16

    /// A name that appears more than once.
    package struct RepeatedName: Error, Equatable, CustomStringConvertible {
        /// The repeated name.
        package let name: String
        /// The error for a parameter that appears more than once.
        /// - Parameter name: The repeated parameter's name.
        package init(name: String) { self.name = name }
        /// `parameter '<name>' is given more than once`.
        package var description: String { "parameter '\(name)' is given more than once" }
    }

    /// No parameters.
    package init() {}

    /// No parameters, with room for `capacity` without growing: for a parser that counts the
    /// pieces first.
    package init(minimumCapacity capacity: Int) {
        pairs.reserveCapacity(capacity)
    }

    /// The given pairs, in order.
    /// - Throws: ``RepeatedName`` for the first name that appears a second time.
    package init(uniquelyNamed pairs: [(name: String, value: String)]) throws(RepeatedName) {
        // Checked where they are, then adopted whole: the array is shared, not copied pair by pair.
        if pairs.count >= Self.indexedFrom {
            var names = Set<String>(minimumCapacity: pairs.count)
            for pair in pairs where !names.insert(pair.name).inserted { throw RepeatedName(name: pair.name) }
            self.names = names
        } else {
            for index in 0..<pairs.count {
                let name = pairs[index].name
                for earlier in 0..<index where pairs[earlier].name == name { throw RepeatedName(name: name) }
            }
        }
        self.pairs = pairs
    }

    /// Adds a parameter unless its name is already present.
    /// - Returns: `false`, changing nothing, when `name` is already present.
    @discardableResult
    package mutating func append(name: String, value: String) -> Bool {
        if names != nil {
            // In place: `names!` mutates the stored set, which a copy bound by `if var` would not.
            guard names!.insert(name).inserted else { return false }
            pairs.append((name, value))
            return true
        }
        guard self[name] == nil else { return false }
        pairs.append((name, value))
        if pairs.count >= Self.indexedFrom { names = Set(pairs.lazy.map(\.name)) }
        return true
    }

    /// The value of the parameter `name`, or `nil` when there is none.
    package subscript(name: String) -> String? {
        for index in 0..<pairs.count where pairs[index].name == name { return pairs[index].value }
        return nil
    }

    /// How many parameters there are.
    package var count: Int { pairs.count }

    /// Whether there are none.
    package var isEmpty: Bool { pairs.isEmpty }
}
