package messages

import (
	"context"
	"net/http"

	"sdkpp/server/store"
	"sdkpp/wire"
)

// ModalUpload is a modal submission sent as multipart/form-data: its payload_json and its files,
// by the n of their files[n] part, as attachments not yet kept.
type ModalUpload struct {
	Payload []byte
	Files   map[uint64]store.GuildAttachment
}

// ReadModalUpload reads a modal submission's multipart body as a message's is read (at most
// wire.MaxAttachments files of wire.MaxUploadBytes each, rules MOD-8 and LIM-1; 413 40005 past
// them; payload_json required).
func (s *Service) ReadModalUpload(r *http.Request) (*ModalUpload, error) {
	req, err := readMessageRequest(r)
	if err != nil {
		return nil, err
	}
	if req.payload == nil {
		return nil, wire.InvalidAt(wire.PayloadJSONPart, "BASE_TYPE_REQUIRED", "This field is required")
	}
	out := &ModalUpload{Payload: req.payload, Files: map[uint64]store.GuildAttachment{}}
	for i := range req.files {
		a, err := s.newAttachment(&req.files[i], nil, "", i)
		if err != nil {
			return nil, err
		}
		out.Files[req.files[i].n] = a
	}
	return out, nil
}

// KeepModalFiles keeps files of the modal submission id in channel ch (served as attachments
// are) and returns their wire objects, by id.
func (s *Service) KeepModalFiles(ctx context.Context, ch *store.GuildChannel, id uint64, files []store.GuildAttachment) (map[string]wire.Attachment, error) {
	for i := range files {
		files[i].ChannelID, files[i].MessageID = ch.ID, id
	}
	if err := s.Store.SetGuildAttachments(ctx, ch.ID, id, files); err != nil {
		return nil, err
	}
	out := make(map[string]wire.Attachment, len(files))
	for i := range files {
		a := s.attachmentObject(&files[i])
		out[a.ID.String()] = a
	}
	return out, nil
}
