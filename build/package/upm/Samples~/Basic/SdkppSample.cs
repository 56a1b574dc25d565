// The sdkpp sample for Unity: add this MonoBehaviour to a GameObject and press Play. It links the
// player's account (the system browser opens the consent page), connects, joins the lobby whose
// secret is lobbySecret, shows its chat with a field to write in, joins the lobby's voice call with
// push-to-talk on the pushToTalk key, and shows the call's verification code: the same code on
// every player's screen means nobody is in the middle of the end-to-end encryption.
//
// Events and the continuations of awaited calls run inside Sdk.RunCallbacks, which Update calls
// once per frame, on the main thread: they may touch the scene. The package's Sdkpp.Unity assembly
// sends the SDK's log and the handlers' exceptions to the console and shuts the SDK down when play
// mode ends and before a domain reload.
using System;
using System.Collections.Generic;
using System.Threading.Tasks;
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

        async void Start()
        {
            client = new Client();
            client.SetApplicationId(applicationId);
            client.StatusChanged += OnStatusChanged;
            client.MessageCreated += OnMessage;
            try
            {
                await LinkAccount();
                client.Connect(); // StatusChanged reports Ready, then the sample joins the lobby
            }
            catch (SdkException e)
            {
                status = "account linking failed: " + e.Result;
            }
            catch (ObjectDisposedException)
            {
                // The scene ended (OnDestroy) while linking.
            }
        }

        // LinkAccount runs OAuth 2.0 with PKCE: Authorize opens the consent page, GetToken exchanges
        // the code, UpdateToken hands the token to the SDK.
        async Task LinkAccount()
        {
            using (AuthorizationCodeVerifier verifier = client.CreateAuthorizationCodeVerifier())
            using (AuthorizationArgs args = new AuthorizationArgs())
            {
                args.SetScopes(Client.GetDefaultCommunicationScopes());
                using (AuthorizationCodeChallenge challenge = verifier.CopyChallenge())
                {
                    args.SetCodeChallenge(challenge);
                }
                Client.AuthorizationResult auth = (await client.AuthorizeAsync(args)).ThrowIfFailed();
                Client.TokenExchangeResult token = (await client.GetTokenAsync(applicationId, auth.Code,
                    verifier.Verifier(), auth.RedirectUri)).ThrowIfFailed();
                (await client.UpdateTokenAsync(token.TokenType, token.AccessToken)).ThrowIfFailed();
            }
        }

        void OnStatusChanged(Client.Status s, Client.Error error, int detail)
        {
            status = s.ToString();
            if (s == Client.Status.Ready && lobbyId == 0)
            {
                JoinLobby();
            }
        }

        async void JoinLobby()
        {
            Client.CreateOrJoinLobbyResult joined = await client.CreateOrJoinLobbyAsync(lobbySecret);
            if (!joined.Successful)
            {
                status = "could not join the lobby: " + joined;
                return;
            }
            lobbyId = joined.LobbyId;
            call = client.StartCall(lobbyId);
            if (call != null)
            {
                call.SetAudioMode(AudioModeType.MODE_PTT);
            }
        }

        void OnMessage(ulong messageId)
        {
            using (MessageHandle m = client.CopyMessageHandle(messageId))
            {
                if (m == null || m.ChannelId() != lobbyId)
                {
                    return;
                }
                using (UserHandle author = m.CopyAuthor())
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
                    client.SendLobbyMessageAsync(lobbyId, draft); // the message shows up through MessageCreated
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
                client.StatusChanged -= OnStatusChanged;
                client.MessageCreated -= OnMessage;
                client.Dispose();
            }
        }
    }
}
