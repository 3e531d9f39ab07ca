@testable import McSdk
import Testing

@Suite("The refresh flight's decisions, as a value")
struct RefreshFlightMachineTests {
    typealias Machine = RefreshFlightMachine<String>

    @Test("waiters wait until it lands; landing hands every waiter the outcome once; a later land does nothing")
    func landing() throws {
        var machine = Machine()
        let a = machine.newWaiter(), b = machine.newWaiter()
        #expect(a != b)
        #expect(machine.register(a, "a") == nil)
        #expect(machine.register(b, "b") == nil)
        #expect(machine.land(.success("token")) == ["a", "b"])
        #expect(machine.land(.failure(McTokenError(.timedOut, status: .kCannotAcquireTokenData, "late"))) == nil)
        // A waiter that registers after the landing gets the outcome at once
        #expect(try machine.register(machine.newWaiter(), "c")?.get() == "token")
    }

    @Test("a cancelled waiter is handed back to be resumed with cancelled; one cancelled before it registered ends at its registration")
    func cancellation() {
        var machine = Machine()
        let a = machine.newWaiter(), b = machine.newWaiter()
        #expect(machine.register(a, "a") == nil)
        #expect(machine.cancel(a) == "a")
        #expect(machine.cancel(b) == nil)
        guard case .failure(let error) = machine.register(b, "b") else { Issue.record("b waits"); return }
        #expect(error.reason == .cancelled)
        // Neither is resumed again by the landing
        #expect(machine.land(.success("token")) == [])
        #expect(machine.cancel(a) == nil)
    }
}
