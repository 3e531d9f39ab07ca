import Foundation
import IdpPrimitives

// The MasterController's planted bugs (`PlantedBug.mc…`), beside it: one hook per site; a release
// build compiles each to the unplanted behaviour.
extension MasterController.Configuration {
    #if DEBUG
    /// In `validAccessToken`: how long before expiry a planted MC refreshes (`mcRefreshesLiveToken`:
    /// ten minutes, so always, as tokens live five); `nil`: at expiry.
    var plantedRefreshAhead: TimeInterval? { plantedBug.isOn(.mcRefreshesLiveToken) ? 600 : nil }
    /// In `refreshedAccessToken`: whether a planted MC refreshes beside a refresh in flight
    /// (`mcRefreshWithoutSingleFlight`).
    var plantedRefreshesAlone: Bool { plantedBug.isOn(.mcRefreshWithoutSingleFlight) }
    /// In `finishRefresh`: whether a planted MC stores a refresh's tokens although they were
    /// cleared meanwhile (`mcRefreshWritesBackAfterClear`).
    var plantedWritesBackAfterClear: Bool { plantedBug.isOn(.mcRefreshWritesBackAfterClear) }
    /// In `finishRefresh`: whether a planted MC keeps the spent refresh token
    /// (`mcKeepsSpentRefreshToken`).
    var plantedKeepsSpentRefreshToken: Bool { plantedBug.isOn(.mcKeepsSpentRefreshToken) }
    /// In `finishRefresh`: whether a planted MC never ends a refresh whose tokens were cleared
    /// (`mcClearedRefreshNeverEnds`).
    var plantedLeavesClearedRefreshOpen: Bool { plantedBug.isOn(.mcClearedRefreshNeverEnds) }
    /// In ClearIamTokenCache: whether a planted MC keeps the refresh token on
    /// CLEAR_ACCESS_AND_REFRESH (`mcClearKeepsRefreshToken`).
    var plantedClearKeepsRefreshToken: Bool { plantedBug.isOn(.mcClearKeepsRefreshToken) }
    /// In SetAuthorisationCode: whether a planted MC does not mark the user logged in
    /// (`mcLoginForgetsSession`).
    var plantedForgetsLogin: Bool { plantedBug.isOn(.mcLoginForgetsSession) }
    #else
    @inline(__always) var plantedRefreshAhead: TimeInterval? { nil }
    @inline(__always) var plantedRefreshesAlone: Bool { false }
    @inline(__always) var plantedWritesBackAfterClear: Bool { false }
    @inline(__always) var plantedKeepsSpentRefreshToken: Bool { false }
    @inline(__always) var plantedLeavesClearedRefreshOpen: Bool { false }
    @inline(__always) var plantedClearKeepsRefreshToken: Bool { false }
    @inline(__always) var plantedForgetsLogin: Bool { false }
    #endif
}
