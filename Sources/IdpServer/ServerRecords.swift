import Foundation
import IdpPrimitives
import IdpWireFormats

/// A tenant's settings and clients, each client with its forms prepared.
struct TenantConfiguration: Sendable {
    let id: String
    let secretEncoding: IdpServer.SecretEncoding
    var clients: [String: PreparedClient] = [:]

    /// What a password looks like on the wire for this tenant.
    func wireForm(ofSecret secret: String) -> String {
        switch secretEncoding {
        case .plain: secret
        case .sha256: Base64URL.encode(SHA256.hash(secret))
        }
    }
}

/// A user as the IDP stores them. The fields a login reads but seldom changes (id, salt,
/// password, outstanding codes, attributes, AST client ids) live in one immutable ``Profile``
/// shared by every copy, so a copy of the record (read out of its shard, decided on, written
/// back) retains one object; changing one of them makes a new profile. The counters a decision
/// writes are stored inline.
struct UserRecord {
    /// The seldom-changed fields, never changed in place: a record that changes one gets a new
    /// profile, so copies that share it see no change.
    private final class Profile: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private struct Fields {
        let id: String
        let salt: [UInt8]
        var passwordHash: [UInt8]?
        var activationCodes: [String: Date]
        var passwordResetCodes: [String: Date]
        var attributes: [String: String]
        var astClientIds: [String]
    }

    private var profile: Profile

    /// Changes one seldom-changed field: the record gets a new profile with the change.
    private mutating func change(_ body: (inout Fields) -> Void) {
        var fields = profile.fields
        body(&fields)
        profile = Profile(fields)
    }

    var id: String { profile.fields.id }
    var status: IdpUserSnapshot.Status = .pendingActivation
    var salt: [UInt8] { profile.fields.salt }
    var passwordHash: [UInt8]? {
        get { profile.fields.passwordHash }
        set { change { $0.passwordHash = newValue } }
    }
    /// Outstanding one-time activation codes and when each expires.
    var activationCodes: [String: Date] {
        get { profile.fields.activationCodes }
        set { change { $0.activationCodes = newValue } }
    }
    /// Outstanding one-time password-reset codes and when each expires.
    var passwordResetCodes: [String: Date] {
        get { profile.fields.passwordResetCodes }
        set { change { $0.passwordResetCodes = newValue } }
    }
    var attributes: [String: String] {
        get { profile.fields.attributes }
        set { change { $0.attributes = newValue } }
    }
    /// Wrong secrets since the last success or lockout.
    var failedAttempts = 0
    /// Wrong secrets since the last success.
    var totalFailedAttempts = 0
    /// Lockouts since the last success (each lasts longer, see ``LockoutPolicy``).
    var lockouts = 0
    var lockedUntil: Date?
    var permanentlyLocked = false
    var astClientIds: [String] {
        get { profile.fields.astClientIds }
        set { change { $0.astClientIds = newValue } }
    }
    /// How many form steps naming this user the IDP has decided; numbers the audit entries of
    /// those decisions (``AuditEntry/userDecision``), so a reader can put them back in the order
    /// they were decided in without one lock around every decision and its audit.
    var decisions: UInt64 = 0
    /// Bumped by every change stored in the user's shard (``UserShard``).
    var revision: UInt64 = 0

    init(id: String, salt: [UInt8], attributes: [String: String]) {
        profile = Profile(Fields(id: id, salt: salt, passwordHash: nil, activationCodes: [:], passwordResetCodes: [:],
                                 attributes: attributes, astClientIds: []))
    }

    static func hash(_ secret: String, salt: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(salt)
        hasher.update(secret)
        return hasher.finalize()
    }

    /// Whether `digest` (a secret's ``hash(_:salt:)`` under this user's salt) is the password's.
    func passwordMatches(digest: [UInt8]) -> Bool {
        guard let passwordHash else { return false }
        return ConstantTime.equals(digest, passwordHash)
    }
}

/// A new password a flow sets when it completes: its digest, and the salt it was made with.
struct PendingPassword {
    let digest: [UInt8]
    let salt: [UInt8]

    /// The digest, if it was made with `salt` (the user's).
    func digest(forSalt salt: [UInt8]) -> [UInt8]? { salt == self.salt ? digest : nil }
}

/// What an issued code is bound to. A class, since it never changes: a code's entry holds one
/// word for it, and a redemption copies it out with one retain.
final class CodeRecord: Sendable {
    let tenant: String
    let clientId: String
    let userId: String
    let redirectURI: String
    let codeChallenge: String
    let codeChallengeMethod: String
    let astClientId: String
    let expiresAt: Date

    init(tenant: String, clientId: String, userId: String, redirectURI: String, codeChallenge: String, codeChallengeMethod: String,
         astClientId: String, expiresAt: Date) {
        self.tenant = tenant
        self.clientId = clientId
        self.userId = userId
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.codeChallengeMethod = codeChallengeMethod
        self.astClientId = astClientId
        self.expiresAt = expiresAt
    }
}

/// An authorization code's entry in its shard.
enum CodeEntry {
    case issued(CodeRecord)
    case redeemed(RedeemedCode)

    /// When the entry expires: the code's expiry while it is issued, then when its redemption is
    /// forgotten.
    var expiresAt: Date {
        switch self {
        case .issued(let record): record.expiresAt
        case .redeemed(let redeemed): redeemed.forgetAt
        }
    }
}

struct RedeemedCode {
    let forgetAt: Date
    /// The family the first redemption opened; revoked if the code is presented again.
    let family: FamilyID
    /// Whether the code was presented again, which revoked its family.
    var revokedFamily = false
}

struct TokenRecord {
    enum Kind: String { case access, refresh, offline, exchanged }
    let kind: Kind
    let tenant: String
    let clientId: String
    let userId: String
    let expiresAt: Date
    let family: FamilyID
    /// The audience of an exchanged token (RFC 8693); `nil` for the MC's own tokens.
    var audience: String? = nil
    /// A refresh or offline token that was exchanged already; presenting it again is reuse.
    var rotated = false
}

/// A token family's id: its position in its shard's family log (``GrantLog``). A family is
/// reached only through its tokens and its code, which live in its shard, never named by a client,
/// so its id needs neither text nor random bits.
struct FamilyID: Hashable, Sendable {
    let position: UInt64
}

/// A token family's entry: reserved by its code's redemption, then open.
enum FamilyState {
    case reserved(expiresAt: Date)
    case open(TokenFamily)

    /// When the family ends.
    var expiresAt: Date {
        switch self {
        case .reserved(let expiresAt): expiresAt
        case .open(let family): family.expiresAt
        }
    }
}

/// One login's tokens, by their ``TokenRecord/family``: the code redemption's and every
/// rotation's and exchange's after it.
struct TokenFamily {
    /// When the family's offline session ends ("Offline Session Max"), fixed at login.
    let expiresAt: Date
    let astClientId: String
}

extension Dictionary where Value: Equatable {
    /// Applies the entries `changed` added, changed or removed since `base`.
    mutating func apply(changes changed: Self, since base: Self) {
        for key in base.keys where changed[key] == nil { removeValue(forKey: key) }
        for (key, value) in changed where base[key] != value { self[key] = value }
    }
}
