// idp-bench: closed-loop activation+login flows through the real IdpSdk engine, MasterController and
// in-process IDP; prints throughput and p50/p99 latency. (First version; the full benchmark with
// provider strategies, contention and memory sections follows in a later issue.)
import Foundation
import IdpPrimitives
import IdpSdk
import IdpServer
import McSdk
import Synchronization

struct Options {
    var inFlight = 64
    var duration: Duration = .seconds(50)
    var latency: Duration = .milliseconds(5)

    static let usage = """
    usage: idp-bench [--quick] [--flows N] [--duration SECONDS] [--latency MILLISECONDS]

    Runs N concurrent activation+login flows (each on its own simulated device) in a closed loop for
    the given duration, and prints throughput and p50/p99 latency.

      --flows N          flows in flight at once (default 64)
      --duration S       how long to run, in seconds (default 50)
      --latency MS       simulated IDP round trip per request, in milliseconds (default 5)
      --quick            a short smoke run: 16 flows for 5 seconds
      --help             this text
    """

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var iterator = arguments.makeIterator()
        func number(_ flag: String) throws -> Int {
            guard let text = iterator.next(), let value = Int(text), value >= 0 else {
                throw UsageError(message: "\(flag) needs a whole number ≥ 0")
            }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--flows":
                options.inFlight = try number(argument)
                if options.inFlight == 0 { throw UsageError(message: "--flows must be at least 1") }
            case "--duration": options.duration = .seconds(try number(argument))
            case "--latency": options.latency = .milliseconds(try number(argument))
            case "--quick":
                options.inFlight = 16
                options.duration = .seconds(5)
            case "--help", "-h":
                print(usage)
                exit(0)
            default:
                throw UsageError(message: "unknown argument '\(argument)'")
            }
        }
        return options
    }
}

struct UsageError: Error { let message: String }
struct BenchFailure: Error { let message: String }

/// The benchmark's shared provider: answers by the flow's trace id from a table that the flows
/// fill before they start and empty when they end.
final class BenchProvider: IdpSdkInteractionInterface {
    struct Answers: Sendable { let username: String; let password: String; let activationCode: String }
    private let table = LockedValue<[String: Answers]>([:])

    func expect(_ answers: Answers, trace: TraceParent) { table.withLock { $0[trace.traceId] = answers } }
    func forget(_ trace: TraceParent) { _ = table.withLock { $0.removeValue(forKey: trace.traceId) } }

    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        let traceId = interactionData.traceParent.flatMap { TraceParent.traceId(of: $0) }
        guard let traceId, let answers = table.withLock({ $0[traceId] }) else {
            return .init(error: IdpSdkError("BenchProvider", 1, "no answers for this flow's trace"))
        }
        var credentials: [String: String] = [:]
        for id in interactionData.inputFieldIds {
            switch id {
            case IdpSdkConstants.USERNAME: credentials[id] = answers.username
            case IdpSdkConstants.PASSWORD: credentials[id] = answers.password
            case IdpSdkConstants.ACTIVATION_CODE: credentials[id] = answers.activationCode
            default: break
            }
        }
        return .init(credentials: credentials)
    }
}

struct Sample: Sendable {
    var activation: [Duration] = []
    var login: [Duration] = []
    var pair: [Duration] = []
    var errors: [String] = []
}

let options: Options
do {
    options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch let error as UsageError {
    FileHandle.standardError.write(Data("idp-bench: \(error.message)\n\n\(Options.usage)\n".utf8))
    exit(2)
}

let tenant = "bench"
let idp = IdpServer(configuration: .init(auditLogCapacity: 10_000))
try idp.addTenant(tenant)
let url = "https://idp-bench.invalid"
IdpNetwork.shared.register(idp, at: url, latency: options.latency)
let sdk = IdpSdkService(tenantId: tenant, idpUrl: url, certificateChain: Data(), shouldHashPin: false)
let provider = BenchProvider()
let userCounter = Atomic<Int>(0)
let completedPairs = Atomic<Int>(0)
let clock = ContinuousClock()

/// One device: activate a new user, restart, log in. Returns the three latencies or an error.
func activationThenLogin() async -> Result<(Duration, Duration, Duration), BenchFailure> {
    let n = userCounter.wrappingAdd(1, ordering: .relaxed).newValue
    let user = "user-\(n)", password = "pw-\(n)"
    do {
        try idp.addUser(user, tenant: tenant)
        let code = try idp.issueActivationCode(for: user, tenant: tenant)
        let mc = MasterController(configuration: .init(idpUrl: url))
        _ = await mc.receive(KSMStartEvent())
        let answers = BenchProvider.Answers(username: user, password: password, activationCode: code)
        let began = clock.now
        let activation = await threeSteps(mc, client: "KssIdpEnrollment", userId: nil, answers: answers)
        guard activation.status == .kOk else { return .failure(BenchFailure(message: "activation: \(activation.status) \(activation.errorDescription)")) }
        let activated = clock.now
        let start = await mc.receive(KSMStartEvent()) as! KSMStartResultEvent
        let login = await threeSteps(mc, client: "KssIdpLogin", userId: start.userList.first?.userId, answers: answers)
        guard login.status == .kOk else { return .failure(BenchFailure(message: "login: \(login.status) \(login.errorDescription)")) }
        let ended = clock.now
        return .success((activated - began, ended - activated, ended - began))
    } catch {
        return .failure(BenchFailure(message: "setup: \(error)"))
    }
}

func threeSteps(_ mc: MasterController, client: String, userId: String?, answers: BenchProvider.Answers) async -> KSMSetAuthorisationCodeResultEvent {
    let trace = TraceParent.random()
    provider.expect(answers, trace: trace)
    defer { provider.forget(trace) }
    let ast = await mc.receive(KSMGetAstClientDataEvent(tenantId: tenant)) as! KSMGetAstClientDataResultEvent
    let result = await sdk.getAuthorizationCode(withAstClientData: AstClientDataInfo(astClientData: ast), clientId: client,
                                                interactionInterface: provider, userId: userId, traceParent: trace.description)
    return await mc.receive(KSMSetAuthorisationCodeEvent(tenantId: tenant, authenticationMode: .no,
                                                         authorisationCode: result.authorizationCode ?? "", clientId: client)) as! KSMSetAuthorisationCodeResultEvent
}

func percentile(_ sorted: [Duration], _ p: Double) -> String {
    guard !sorted.isEmpty else { return "-" }
    let index = min(sorted.count - 1, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1)
    return milliseconds(sorted[max(0, index)])
}

func milliseconds(_ value: Duration) -> String {
    String(format: "%.2f", value.timeInterval * 1e3)
}

FileHandle.standardError.write(Data("idp-bench: \(options.inFlight) flows in flight for \(options.duration.components.seconds) s, IDP latency \(milliseconds(options.latency)) ms per request\n".utf8))
let deadline = clock.now + options.duration
let began = clock.now
let progress = Task {
    while clock.now < deadline {
        try? await Task.sleep(for: .seconds(1))
        let elapsed = clock.now - began
        FileHandle.standardError.write(Data("  \(elapsed.components.seconds) s: \(completedPairs.load(ordering: .relaxed)) activation+login pairs\n".utf8))
    }
}
let samples = await withTaskGroup(of: Sample.self) { group in
    for _ in 0..<options.inFlight {
        group.addTask {
            var sample = Sample()
            while clock.now < deadline {
                switch await activationThenLogin() {
                case .success(let (activation, login, pair)):
                    sample.activation.append(activation)
                    sample.login.append(login)
                    sample.pair.append(pair)
                    completedPairs.add(1, ordering: .relaxed)
                case .failure(let error):
                    sample.errors.append(error.message)
                }
            }
            return sample
        }
    }
    var merged = Sample()
    for await sample in group {
        merged.activation += sample.activation
        merged.login += sample.login
        merged.pair += sample.pair
        merged.errors += sample.errors
    }
    return merged
}
let elapsed = clock.now - began
progress.cancel()

let seconds = elapsed.timeInterval
let pairs = samples.pair.count
print("idp-bench — activation+login flows through IdpSdk, MasterController and the in-process IDP (closed loop)")
print("cores: \(ProcessInfo.processInfo.activeProcessorCount), flows in flight: \(options.inFlight), IDP latency: \(milliseconds(options.latency)) ms/request, ran \(String(format: "%.1f", seconds)) s")
print("completed: \(pairs) activation+login pairs (\(pairs * 2) flows), errors: \(samples.errors.count)")
print("throughput: \(String(format: "%.1f", Double(pairs) / seconds)) pairs/s, \(String(format: "%.1f", Double(pairs * 2) / seconds)) flows/s")
print("")
print("latency (ms)          p50       p99   samples")
for (name, values) in [("activation", samples.activation), ("login", samples.login), ("activation+login", samples.pair)] {
    let sorted = values.sorted()
    print(name.padding(toLength: 18, withPad: " ", startingAt: 0) + percentile(sorted, 50).leftPadded(8) + percentile(sorted, 99).leftPadded(10) + "\(sorted.count)".leftPadded(10))
}
let threads = sdk.workerThreads
print("")
print("SDK worker threads: peak \(threads.peak), started \(threads.started); flows still in flight: \(sdk.flowsInFlight)")
if let first = samples.errors.first {
    print("first error: \(first)")
    exit(1)
}

extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
