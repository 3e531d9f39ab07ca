import BenchSupport
import CredentialProviders
import Foundation
import IdpPrimitives
import IdpSdk
import Synchronization

/// A way of answering `provideCredentials`, measured side by side with the others.
struct Strategy {
    enum Kind: String { case product, peer }
    let name: String
    let kind: Kind
    /// The recommended provider (`CredentialStore`).
    var recommended = false
    /// Answers the first user's values to every call (one account's provider).
    var oneAccount = false
    let provider: any IdpSdkInteractionInterface & Sendable
}

/// The users every strategy answers for: the same table, the same calls.
struct HotPathData {
    static let tenant = "bench"
    let users: [(key: CredentialStore.Key, values: [String: String])]

    init(userCount: Int, seed: UInt64) {
        var random = SeededRandom(seed: seed)
        users = (0..<userCount).map { index in
            let userId = "user-\(index)-\(random.next() % 10_000)"
            return (CredentialStore.Key(tenantId: Self.tenant, userId: userId),
                    [IdpSdkConstants.USERNAME: userId, IdpSdkConstants.PASSWORD: "pw-\(random.next() % 1_000_000)"])
        }
    }

    var table: [CredentialStore.Key: [String: String]] { Dictionary(uniqueKeysWithValues: users.map { ($0.key, $0.values) }) }

    /// The calls one thread makes, in a ring of 1,024: login steps asking username and password,
    /// each of another user, with flow ids of that thread only (blocking providers key their
    /// waits by flow).
    func calls(thread: Int) -> [IdpSdkInteractionData] {
        let fields = [IdpSdkInputField(id: IdpSdkConstants.USERNAME, label: "Username", isSecret: false),
                      IdpSdkInputField(id: IdpSdkConstants.PASSWORD, label: "Password", isSecret: true)]
        return (0..<1_024).map { index in
            let user = users[(thread * 7_919 + index * 31) % users.count].key
            return IdpSdkInteractionData(
                inputFields: fields, flowId: IdpSdkFlowID.next(), step: 1, attempt: 1,
                tenantId: user.tenantId, clientId: "KssIdpLogin", userId: user.userId, traceParent: nil, previousError: nil
            )
        }
    }
}

/// Every provider of `CredentialProviders` and every peer pattern, each answering the same users.
func strategies(_ data: HotPathData) async -> [Strategy] {
    let table = data.table
    let store = CredentialStore()
    for (key, values) in data.users { store.set(values, userId: key.userId, tenantId: key.tenantId) }
    let vault = CredentialVault()
    for (key, values) in data.users { await vault.store(values, userId: key.userId, tenantId: key.tenantId) }
    let candidates = table.mapValues { $0.mapValues { [$0] } }
    let first = data.users[0].values
    // The calls ask the standard ids; the wrapped store knows them as "login" and "secret".
    let renamed = CredentialStore()
    for (key, values) in data.users {
        renamed.set(["login": values[IdpSdkConstants.USERNAME]!, "secret": values[IdpSdkConstants.PASSWORD]!], userId: key.userId, tenantId: key.tenantId)
    }
    return [
        Strategy(name: "CredentialStore", kind: .product, recommended: true, provider: store),
        Strategy(name: "StaticCredentials", kind: .product, oneAccount: true, provider: StaticCredentials(first)),
        Strategy(name: "FieldMappingProvider(CredentialStore)", kind: .product,
                 provider: FieldMappingProvider(renamed, mapping: [IdpSdkConstants.USERNAME: "login", IdpSdkConstants.PASSWORD: "secret"])),
        Strategy(name: "MultiStepProvider.candidates", kind: .product, provider: MultiStepProvider.candidates { call in
            call.userId.flatMap { candidates[CredentialStore.Key(tenantId: call.tenantId, userId: $0)] }
        }),
        Strategy(name: "RecordingProvider(StaticCredentials)", kind: .product, oneAccount: true, provider: RecordingProvider(StaticCredentials(first))),
        // One account's session, valid for the whole run: the hot path of a token cache that needs
        // no refresh. Its answer is built from the session at each call, as the documented example
        // does; handing every thread one stored dictionary would time the reference count they all
        // write (the shared-answer floor), which no provider's own code causes.
        Strategy(name: "TokenCacheProvider", kind: .product, oneAccount: true, provider: TokenCacheProvider<BenchSession>(
            initial: CachedToken(BenchSession(first), expires: Date().addingTimeInterval(365 * 86_400)),
            refresh: { previous in previous ?? CachedToken(BenchSession(first), expires: Date().addingTimeInterval(365 * 86_400)) },
            credentials: { session, _ in [IdpSdkConstants.USERNAME: session.user, IdpSdkConstants.PASSWORD: session.secret] })),
        Strategy(name: "VaultProvider (actor)", kind: .product, provider: VaultProvider(vault: vault, timeout: .seconds(30))),
        Strategy(name: "AsyncCredentialBridge", kind: .product, provider: AsyncCredentialBridge(timeout: .seconds(30)) { call in
            guard let userId = call.userId, let values = table[CredentialStore.Key(tenantId: call.tenantId, userId: userId)] else {
                throw CredentialProviderError.make(.noCredentials, "unknown user")
            }
            return values
        }),
        Strategy(name: "DispatchQueue.sync store", kind: .peer, provider: DispatchQueueStore(table)),
        Strategy(name: "NSLock store", kind: .peer, provider: NSLockStore(table)),
        Strategy(name: "Task + semaphore into actor", kind: .peer, provider: ActorBridgeStore(table)),
    ]
}

/// The floor of calling a provider at all: each thread its own provider and prepared answer.
let nothingSharedFloorName = "nothing shared"
/// Calling a provider that returns one prepared answer shared by every thread.
let sharedAnswerFloorName = "shared answer: one prepared answer returned from every thread"

/// The floors: what the cheapest synchronized lookup and the cheapest shared write cost, and
/// what calling a provider costs with nothing shared and with one shared answer.
struct Floor {
    let name: String
    /// Makes one thread's operation; see ``race(threads:seconds:batch:makeOperation:)``.
    let makeOperation: (Int) -> @Sendable (Int) -> Int
}

func floors(_ data: HotPathData) -> [Floor] {
    let mutexTable = MutexTable(data.table)
    let lockedTable = LockedValue(data.table)
    let counter = AtomicCounter()
    let sharedAnswer: any IdpSdkInteractionInterface & Sendable = NoOpProvider(answer: .init(credentials: data.users[0].values))
    func keys(_ thread: Int) -> [CredentialStore.Key] { data.calls(thread: thread).map { CredentialStore.Key(tenantId: $0.tenantId, userId: $0.userId!) } }
    return [
        Floor(name: "Mutex + dictionary lookup") { thread in
            let keys = keys(thread)
            return { call in mutexTable.table.withLock { $0[keys[call & 1_023]] }?.count ?? 0 }
        },
        Floor(name: "LockedValue + dictionary lookup") { thread in
            let keys = keys(thread)
            return { call in lockedTable.withLock { $0[keys[call & 1_023]] }?.count ?? 0 }
        },
        Floor(name: "Atomic add (relaxed)") { _ in
            { _ in counter.value.wrappingAdd(1, ordering: .relaxed).newValue }
        },
        // What calling any provider costs in this harness: the protocol call with a prepared
        // interaction data and a prepared answer, no lookup, no lock. Each thread calls its own
        // provider instance returning its own answer (a dictionary of its own storage, made
        // before timing), so no cache line is written by two threads.
        Floor(name: nothingSharedFloorName) { thread in
            let calls = data.calls(thread: thread).map(CallBox.init)
            let answer = Dictionary(uniqueKeysWithValues: data.users[thread % data.users.count].values.map { ($0.key, $0.value) })
            let provider: any IdpSdkInteractionInterface & Sendable = NoOpProvider(answer: .init(credentials: answer))
            return { call in provider.provideCredentials(calls[call & 1_023].data).credentials?.count ?? -1 }
        },
        // What a provider author pays for returning one cached dictionary from every thread: each
        // return retains the one dictionary storage, a reference count every thread writes.
        Floor(name: sharedAnswerFloorName) { thread in
            let calls = data.calls(thread: thread).map(CallBox.init)
            return { call in sharedAnswer.provideCredentials(calls[call & 1_023].data).credentials?.count ?? -1 }
        },
    ]
}

final class MutexTable: Sendable {
    let table: Mutex<[CredentialStore.Key: [String: String]]>
    init(_ table: [CredentialStore.Key: [String: String]]) { self.table = Mutex(table) }
}

final class AtomicCounter: Sendable {
    let value = Atomic<Int>(0)
}

/// One cell of the provider hot path: a floor or a strategy, as a way to make each thread's
/// operation for a given thread count. The providers section and the scaling probe both run them.
struct HotPathCell {
    /// The floor's or the strategy's name.
    let name: String
    let isFloor: Bool
    let makeOperations: (_ threads: Int) -> (Int) -> @Sendable (Int) -> Int
}

/// The cells of the hot path: floors first, then strategies, each calling over `data`'s calls.
func hotPathCells(strategies: [Strategy], floors: [Floor], data: HotPathData) -> [HotPathCell] {
    var cells = floors.map { floor in HotPathCell(name: floor.name, isFloor: true) { _ in floor.makeOperation } }
    for strategy in strategies {
        let provider = strategy.provider
        // A provider that observes flows is told each one ended after its call, as the engine
        // tells it when a flow of one form step ends: otherwise every lap of the ring would re-ask
        // a step its flow had answered, and the flows it tracks would pile up over the run.
        let observer = ObserverBox(provider)
        cells.append(HotPathCell(name: strategy.name, isFloor: false) { threads in
            let perThread = (0..<threads).map { data.calls(thread: $0).map(CallBox.init) }
            return { thread in
                let calls = perThread[thread]
                guard let observer else {
                    return { call in provider.provideCredentials(calls[call & 1_023].data).credentials?.count ?? -1 }
                }
                return { call in
                    let box = calls[call & 1_023]
                    let answered = observer.observer.provideCredentials(box.data).credentials?.count ?? -1
                    observer.observer.flowDidEnd(box.data.flowId, result: box.ended)
                    return answered
                }
            }
        })
    }
    return cells
}

/// Runs the providers section: every strategy and floor at every thread count.
///
/// Each cell (one strategy at one thread count) is measured in `rounds` short runs, interleaved
/// with the other cells of that thread count, and reports the median: a burst of noise from the
/// machine then hits one run of several strategies rather than every run of one.
func runProvidersSection(_ options: Options, progress: Progress) async throws(BenchFailure) -> (providers: [ProviderRow], floors: [FloorRow]) {
    let data = HotPathData(userCount: 1_000, seed: options.seed)
    let strategies = await strategies(data)
    let floors = floors(data)
    try await verify(strategies, data)
    let cells = hotPathCells(strategies: strategies, floors: floors, data: data).map(\.makeOperations)
    let total = cells.count * options.threads.count * options.rounds
    var done = 0
    var providerRows: [ProviderRow] = []
    var floorRows: [FloorRow] = []
    // Warm-up, untimed: every cell once on one thread, so the first cell measured does not pay
    // for page faults, cold caches and lazy initialisation.
    for (index, makeOperations) in cells.enumerated() {
        progress.report("providers: warming up \(index + 1)/\(cells.count)")
        _ = race(threads: 1, seconds: options.secondsPerProviderCell / 2, makeOperation: makeOperations(1))
    }
    for threads in options.threads {
        let operations = cells.map { $0(threads) }
        var runs = Array(repeating: [RaceResult](), count: cells.count)
        for _ in 0..<options.rounds {
            for (index, makeOperation) in operations.enumerated() {
                runs[index].append(race(threads: threads, seconds: options.secondsPerProviderCell, makeOperation: makeOperation))
                done += 1
                progress.report("providers: \(done)/\(total) runs, \(threads) threads")
            }
        }
        for (index, results) in runs.enumerated() {
            let median = results.median(by: \.nanosecondsPerOperation)
            let calls = results.reduce(0) { $0 + $1.operations }
            if index < floors.count {
                floorRows.append(FloorRow(name: floors[index].name, threads: threads, nsPerOp: median.nanosecondsPerOperation, ops: calls))
            } else {
                let strategy = strategies[index - floors.count]
                providerRows.append(ProviderRow(strategy: strategy.name, kind: strategy.kind.rawValue, recommended: strategy.recommended,
                                                threads: threads, nsPerCall: median.nanosecondsPerOperation, calls: calls))
            }
        }
    }
    return (providerRows, floorRows)
}

/// Checks, before anything is timed, that every strategy gives the right answer: a fast wrong
/// answer would be a meaningless figure. Runs the calls on an OS thread, where blocking providers
/// may wait.
func verify(_ strategies: [Strategy], _ data: HotPathData) async throws(BenchFailure) {
    let calls = Array(data.calls(thread: 0).prefix(64))
    let table = data.table
    let failures: [String] = await OSThreads.run {
        var failures: [String] = []
        for strategy in strategies {
            for call in calls {
                let expected = table[CredentialStore.Key(tenantId: call.tenantId, userId: call.userId!)]!
                let answer = strategy.provider.provideCredentials(call)
                let wanted = strategy.oneAccount ? data.users[0].values : expected
                if answer.credentials != wanted {
                    failures.append("\(strategy.name) answered \(answer) for \(call.userId!)")
                    break
                }
            }
        }
        return failures
    }
    if let failure = failures.first { throw BenchFailure("a strategy answers wrongly: \(failure)") }
}

/// A provider that observes flows, as such. Sound as `@unchecked Sendable`: it holds a provider
/// that is `Sendable` (``Strategy/provider``), seen through another of its protocols.
struct ObserverBox: @unchecked Sendable {
    let observer: any IdpSdkFlowObserving

    init?(_ provider: any IdpSdkInteractionInterface & Sendable) {
        guard let observer = provider as? any IdpSdkFlowObserving else { return nil }
        self.observer = observer
    }
}

/// The session a token-cache strategy holds: one account's values.
struct BenchSession: Sendable {
    let user: String
    let secret: String

    init(_ values: [String: String]) {
        user = values[IdpSdkConstants.USERNAME] ?? ""
        secret = values[IdpSdkConstants.PASSWORD] ?? ""
    }
}

/// Returns the same prepared answer to every call.
struct NoOpProvider: IdpSdkInteractionInterface, Sendable {
    let answer: IdpSdkProvideCredentialsResult
    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult { answer }
}

/// One prepared call. Kept in a class with a `let`, so a call can pass the interaction data by
/// reference to the immutable field instead of copying it out of an array element.
final class CallBox: Sendable {
    let data: IdpSdkInteractionData
    /// The result an observing provider is told its flow ended with.
    let ended: IdpSdkResult
    init(_ data: IdpSdkInteractionData) {
        self.data = data
        ended = IdpSdkResult(authorizationCode: "bench-code", flowId: data.flowId)
    }
}
