// The sdkpp sample for Unity: add this MonoBehaviour to a GameObject and press Play. It links the
// player's account (the system browser opens the consent page), connects, joins the lobby whose
// secret is lobbySecret, shows its chat with a field to write in, joins the lobby's voice call with
// push-to-talk on the pushToTalk key, and shows the call's verification code: the same code on
// every player's screen means nobody is in the middle of the end-to-end encryption.
//
// Callbacks run inside Sdk.RunCallbacks, which Update calls once per frame, on the main thread: a
// callback may touch the scene.
using System.Collections.Generic;
using UnityEngine;

namespace Sdkpp.Samples
{
    /// <summary>Links the account, joins a lobby by its secret, chats and talks.</summary>
    public class SdkppSample : MonoBehaviour
    {
        /// <summary>The game's application id on the sdkpp service.</summary>
        public ulong applicationId = 1234567890;

        /// <summary>Players with the same secret meet in the same lobby.</summary>
        public string lobbySecret = "sample-match";

        /// <summary>Held to talk in the lobby's voice call.</summary>
        public KeyCode pushToTalk = KeyCode.V;

        Client client;
        Call call;
        ulong lobbyId;
        string status = "linking the account...";
        string draft = "";
        readonly List<string> chat = new List<string>();

        void Start()
        {
            client = new Client();
            client.SetApplicationId(applicationId);
            client.AddLogCallback((message, severity) => Debug.Log("[sdkpp " + severity + "] " + message),
                LoggingSeverity.Warning);
            client.SetStatusChangedCallback((s, error, detail) =>
            {
                status = s.ToString();
                if (s == Client.Status.Ready)
                {
                    JoinLobby();
                }
            });
            client.SetMessageCreatedCallback(OnMessage);
            LinkAccount();
        }

        // LinkAccount runs OAuth 2.0 with PKCE: Authorize opens the consent page, GetToken exchanges
        // the code, and the SDK connects with the token.
        void LinkAccount()
        {
            AuthorizationCodeVerifier verifier = client.CreateAuthorizationCodeVerifier();
            using (AuthorizationCodeChallenge challenge = verifier.Challenge())
            using (AuthorizationArgs args = new AuthorizationArgs())
            {
                args.SetScopes(Client.GetDefaultCommunicationScopes());
                args.SetCodeChallenge(challenge);
                client.Authorize(args, (result, code, redirectUri) =>
                {
                    using (result)
                    {
                        if (!result.Successful())
                        {
                            status = "account linking failed: " + result;
                            verifier.Dispose();
                            return;
                        }
                    }
                    client.GetToken(applicationId, code, verifier.Verifier(), redirectUri,
                        (tokenResult, accessToken, refreshToken, tokenType, expiresIn, scopes) =>
                        {
                            verifier.Dispose();
                            using (tokenResult)
                            {
                                if (!tokenResult.Successful())
                                {
                                    status = "token exchange failed: " + tokenResult;
                                    return;
                                }
                            }
                            client.UpdateToken(tokenType, accessToken, updated =>
                            {
                                updated.Dispose();
                                client.Connect();
                            });
                        });
                });
            }
        }

        void JoinLobby()
        {
            client.CreateOrJoinLobby(lobbySecret, (result, id) =>
            {
                using (result)
                {
                    if (!result.Successful())
                    {
                        status = "could not join the lobby: " + result;
                        return;
                    }
                }
                lobbyId = id;
                call = client.StartCall(id);
                if (call != null)
                {
                    call.SetAudioMode(AudioModeType.MODE_PTT);
                }
            });
        }

        void OnMessage(ulong messageId)
        {
            using (MessageHandle m = client.GetMessageHandle(messageId))
            {
                if (m == null || m.ChannelId() != lobbyId)
                {
                    return;
                }
                using (UserHandle author = m.Author())
                {
                    chat.Add((author != null ? author.DisplayName() : "?") + ": " + m.Content());
                }
            }
        }

        void Update()
        {
            Sdk.RunCallbacks();
            if (call != null)
            {
                call.SetPTTActive(Input.GetKey(pushToTalk));
            }
        }

        void OnGUI()
        {
            GUILayout.Label("sdkpp: " + status);
            if (call != null)
            {
                GUILayout.Label("Voice: hold " + pushToTalk + " to talk. Verification code: " + call.GetVerificationCode());
            }
            foreach (string line in chat)
            {
                GUILayout.Label(line);
            }
            if (lobbyId != 0)
            {
                draft = GUILayout.TextField(draft);
                if (GUILayout.Button("Send") && draft.Length > 0)
                {
                    client.SendLobbyMessage(lobbyId, draft, (result, id) => result.Dispose());
                    draft = "";
                }
            }
        }

        void OnDestroy()
        {
            if (call != null)
            {
                call.Dispose();
            }
            if (client != null)
            {
                client.Dispose();
            }
        }
    }
}
